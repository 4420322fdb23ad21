package controller

import (
	"io"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// BenchmarkPass measures a worker's own cost per key, the queue and the
// bookkeeping around a no-op handler (hot-loop checks, retry decision),
// without an API server: one op is one key added, handled and forgotten.
// The informer is never started; its empty store makes every key a
// deletion.
func BenchmarkPass(b *testing.B) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	c, err := New("bench", informer, HandlerFunc(func(string, runtime.Object) error { return nil }), &Options{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	queue := workqueue.New(workqueue.Options[string]{})
	defer queue.ShutDown()
	ctrl := c.(*controller)
	r := &run{ctx: b.Context(), queue: queue}
	b.ReportAllocs()
	for b.Loop() {
		queue.Add("ns/x")
		ctrl.processNext(r)
	}
}
