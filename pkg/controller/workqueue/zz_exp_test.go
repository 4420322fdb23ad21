package workqueue

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
)

func BenchmarkSerial(b *testing.B) {
	for _, impl := range []struct {
		name string
		new  func() dispatchQueue
	}{
		{"lariat", func() dispatchQueue { return New(Options[string]{}) }},
		{"client-go", func() dispatchQueue {
			return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		}},
	} {
		b.Run(impl.name, func(b *testing.B) {
			keys := benchKeys(b.N)
			q := impl.new()
			b.ReportAllocs()
			b.ResetTimer()
			for _, k := range keys {
				q.Add(k)
			}
			for range keys {
				k, _ := q.Get()
				q.Done(k)
				q.Forget(k)
			}
		})
		b.Run(impl.name+"-pingpong", func(b *testing.B) {
			keys := benchKeys(b.N)
			q := impl.new()
			b.ReportAllocs()
			b.ResetTimer()
			for _, k := range keys {
				q.Add(k)
				k, _ := q.Get()
				q.Done(k)
				q.Forget(k)
			}
		})
	}
}
