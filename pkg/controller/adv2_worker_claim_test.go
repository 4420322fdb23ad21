package controller

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// TestAdv2PassesOfTwoRunsOnOneKeyNeverOverlap drives two runs of one
// controller by hand on one key, each with its own queue and worker, as a
// restart leaves them: the older run's context has ended, the newer one
// started after that (its older lists the first). Each run's claim reads
// the other's worker record, not a shared lock (issue 30, h30z).
//
//   - The newer run's pass is under way (its handler blocked) when the
//     older run's worker, which took the key from its queue before the
//     stop, claims it: the older run must not call the handler (its
//     context ended: it sees that after its claim).
//   - The older run's pass is under way (blocked; it began before the
//     stop) when the newer run takes the key: the newer run must not call
//     the handler beside it, and must have the key queued again once the
//     older pass ends, and then handle it.
func TestAdv2PassesOfTwoRunsOnOneKeyNeverOverlap(t *testing.T) {
	var inFlight, most, calls atomic.Int32
	entered, release := make(chan struct{}, 4), make(chan struct{})
	c := adv2Controller(t, func() {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		calls.Add(1)
		entered <- struct{}{}
		<-release
		inFlight.Add(-1)
	})
	oldCtx, stop := context.WithCancel(t.Context())
	older := adv2Run(t, oldCtx)
	newer := adv2Run(t, t.Context())
	newer.older.Store(&[]*run{older})
	stop()

	// The newer run's pass first; the older run's worker then claims.
	newer.queue.Add("ns/k")
	newDone := goProcess(c, newer)
	waitChan(t, entered, "the newer run's pass to call the handler")
	older.queue.Add("ns/k")
	oldDone := goProcess(c, older)
	select {
	case <-oldDone:
	case <-entered:
		release <- struct{}{}
		t.Errorf("the older run, stopped, called the handler beside the newer run's pass")
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for the older run's worker to give the key up")
	}
	release <- struct{}{}
	waitChan(t, newDone, "the newer run's pass to end")
	if n := calls.Load(); n != 1 {
		t.Fatalf("the handler was called %d times, want 1 (the older run, stopped, called it beside the newer run's pass)", n)
	}

	// The older run's pass under way (claimed while its context was live:
	// by hand here, as a pass that began before the stop), the newer run
	// takes the key.
	if !older.workers[0].claim(older, "ns/k", c.now(), c.name) {
		t.Fatalf("the older run could not claim a key no one handles")
	}
	newer.queue.Add("ns/k")
	newDone = goProcess(c, newer)
	select {
	case <-newDone:
	case <-entered:
		release <- struct{}{}
		t.Fatalf("the newer run called the handler while the older run's pass of the key was under way")
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for the newer run's worker to put the key aside")
	}
	older.workers[0].release() // the older pass ends: the key is queued again in the newer run
	if n := newer.queue.Len(); n != 1 {
		t.Fatalf("after the older pass ended the newer run's queue holds %d keys, want 1 (the key, queued again)", n)
	}
	newDone = goProcess(c, newer)
	waitChan(t, entered, "the newer run's pass of the key queued again")
	release <- struct{}{}
	waitChan(t, newDone, "the newer run's second pass to end")
	if m := most.Load(); m != 1 {
		t.Errorf("%d passes of the key ran at once, want 1", m)
	}
}

// adv2Controller is a controller with handler h over an informer never
// started (its empty store makes every key a deletion).
func adv2Controller(t *testing.T, h func()) *controller {
	t.Helper()
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	c, err := New("adv2", informer, HandlerFunc(func(string, runtime.Object) error { h(); return nil }), &Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*controller)
}

// adv2Run is a run of one worker on a queue of its own, shut down when t
// ends.
func adv2Run(t *testing.T, ctx context.Context) *run {
	queue := workqueue.New(workqueue.Options[string]{})
	t.Cleanup(queue.ShutDown)
	return &run{ctx: ctx, queue: queue, workers: newWorkers(1)}
}

// goProcess runs one processNext of r's worker and closes the returned
// channel when it returns.
func goProcess(c *controller, r *run) chan struct{} {
	done := make(chan struct{})
	go func() { c.processNext(r, r.workers[0]); close(done) }()
	return done
}

func waitChan(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
