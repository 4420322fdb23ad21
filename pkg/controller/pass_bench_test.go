package controller

import (
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// benchPassController is a controller with a no-op handler over an
// informer never started (its empty store makes every key a deletion),
// and a run on a queue of its own, shut down when b ends.
func benchPassController(b *testing.B) (*controller, *run) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	c, err := New("bench", informer, HandlerFunc(func(string, runtime.Object) error { return nil }), &Options{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	queue := workqueue.New(workqueue.Options[string]{})
	b.Cleanup(queue.ShutDown)
	return c.(*controller), &run{ctx: b.Context(), queue: queue}
}

// BenchmarkPass measures a worker's own cost per key, the queue and the
// bookkeeping around a no-op handler (hot-loop checks, retry decision),
// without an API server: one op is one key added, handled and forgotten.
// The informer is never started; its empty store makes every key a
// deletion.
func BenchmarkPass(b *testing.B) {
	ctrl, r := benchPassController(b)
	queue, w := r.queue, &worker{}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		queue.Add("ns/x")
		ctrl.processNext(r, w)
	}
}

// BenchmarkPassBurst is BenchmarkPass over distinct keys queued in bursts
// of 100,000, as the compare harness's dispatch phase queues a million
// keys ahead of the workers: the queue's map is then large, and each
// lookup in it a likely cache miss. One op is one key added and handled
// (a deletion: the store is empty); the adds are counted in the ops.
func BenchmarkPassBurst(b *testing.B) {
	const burst = 100000
	ctrl, r := benchPassController(b)
	queue, w := r.queue, &worker{}
	keys := make([]string, 4*burst)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/key-%07d", i)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		if i%burst == 0 {
			for _, k := range keys[i%len(keys) : i%len(keys)+burst] {
				queue.Add(k)
			}
		}
		ctrl.processNext(r, w)
	}
}

// BenchmarkPassParallel is BenchmarkPass with GOMAXPROCS goroutines adding
// and handling keys of one controller at once, as its workers do: what the
// locks every pass takes cost when they are shared. Each goroutine adds
// its own keys (1,024 of them, in turn); the key it then handles may be
// another's.
func BenchmarkPassParallel(b *testing.B) {
	ctrl, r := benchPassController(b)
	queue := r.queue
	var next atomic.Int32
	b.ReportAllocs()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		g, w := next.Add(1), &worker{}
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = fmt.Sprintf("ns/g%d-%04d", g, i)
		}
		for i := 0; pb.Next(); i++ {
			queue.Add(keys[i%len(keys)])
			ctrl.processNext(r, w)
		}
	})
}

// reportCPU reports the process's CPU time (user and system) per op, from
// now until the returned function runs: on a machine shared with other
// work, wall time per op counts the waits for a core too, CPU time less
// so. It includes the process's other goroutines (the test control
// plane's clients are idle during benchmarks).
func reportCPU(b *testing.B) (stop func()) {
	began, ok := processCPU()
	return func() {
		if end, ok2 := processCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-began)/float64(b.N), "cpu-ns/op")
		}
	}
}

// processCPU returns the CPU time the process used so far.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
