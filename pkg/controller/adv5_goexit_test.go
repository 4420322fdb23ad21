package controller

import (
	"runtime"
	"sync/atomic"
	"testing"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv5AHandlerThatCallsGoexitDoesNotStopTheWorkers (issue 30, h30d):
// a handler that ends its goroutine with runtime.Goexit (what t.FailNow,
// t.Fatal or t.SkipNow do when a test's handler calls them, outside the
// test's goroutine) is no panic: callHandler's recover sees nothing, the
// deferred releases run, and the worker's goroutine ends. The run's
// other workers go on, but the one that ended is not replaced: with one
// worker, the controller handles nothing any more, and nothing says so.
// The handler's first pass of ns/k calls Goexit; an Enqueue of ns/s
// afterwards must still be handled.
func TestAdv5AHandlerThatCallsGoexitDoesNotStopTheWorkers(t *testing.T) {
	var exited atomic.Int32
	sentinel := newAdv5Sentinel()
	c, _, _ := adv5DeletingController(t, &Options{}, func(key string, obj kruntime.Object) error {
		sentinel.seen(key)
		if key == "ns/k" && exited.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	adv5WaitFor(t, "the handler's pass that calls Goexit", func() bool { return exited.Load() >= 1 })
	adv5WaitFor(t, "the pass to end (its worker released)", func() bool { return !adv5Busy(c) })
	sentinel.after(t, c, 0)
}
