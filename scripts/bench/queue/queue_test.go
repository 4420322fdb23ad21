package queue

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	lariat "github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

const (
	// keys is the number of distinct keys per op, about the objects of a
	// large cluster listed at start.
	keys = 1_000_000
	// workers is the number of worker goroutines, as in a typical controller.
	workers = 2
)

// queue is the part of a work queue the benchmark drives.
type queue interface {
	Get() (string, bool)
	Done(item string)
	Forget(item string)
	ShutDown()
}

// run adds every key with add from one producer while workers consume them
// with a no-op handler; it returns when all keys were processed.
func run(q queue, add func(string), ks []string) {
	var (
		done atomic.Int64
		wg   sync.WaitGroup
	)
	total := int64(len(ks))
	for range workers {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
				q.Forget(item)
				if done.Add(1) == total {
					q.ShutDown()
				}
			}
		})
	}
	for _, k := range ks {
		add(k)
	}
	wg.Wait()
}

func makeKeys() []string {
	ks := make([]string, keys)
	for i := range ks {
		ks[i] = "namespace-" + strconv.Itoa(i%97) + "/object-" + strconv.Itoa(i)
	}
	return ks
}

// BenchmarkQueueDispatch measures one op as dispatching all keys, so the
// ns/op of the sub-benchmarks compare directly (run with -benchtime 3x).
func BenchmarkQueueDispatch(b *testing.B) {
	ks := makeKeys()
	b.Run("lariat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := lariat.New(lariat.Options[string]{})
			run(q, func(k string) { q.AddWithPriority(k, lariat.High) }, ks)
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
			run(q, q.Add, ks)
		}
	})
	b.Run("lasso", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := newLassoQueue()
			run(q, q.add, ks)
		}
	})
	b.Run("controller-runtime", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// An empty name disables metrics, as for the other queues.
			q := priorityqueue.New[string]("")
			opts := priorityqueue.AddOpts{Priority: ptr.To(1)}
			run(q, func(k string) { q.AddWithOpts(opts, k) }, ks)
		}
	})
}
