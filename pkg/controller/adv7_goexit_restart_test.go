package controller

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv7ADeletionWhoseHandlerCallsGoexitAcrossARestartIsToldByTheNextRun
// (issue 30, h30g; held): the handler's first pass telling it ns/k is
// gone outlives its run's stop, and calls runtime.Goexit once the next
// run started (or before it, the controller stopped): the stopping run's
// retry goes with its queue, so the telling must be handed to the next
// run, which tells the handler.
func TestAdv7ADeletionWhoseHandlerCallsGoexitAcrossARestartIsToldByTheNextRun(t *testing.T) {
	for _, exitFirst := range []bool{false, true} {
		adv7GoexitAcrossARestart(t, exitFirst)
	}
}

// adv7GoexitAcrossARestart runs the test above; exitFirst lets the
// handler call Goexit before the next Start.
func adv7GoexitAcrossARestart(t *testing.T, exitFirst bool) {
	var deletions atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	c, fw, cm := adv5DeletingController(t, &Options{RateLimiter: &adv5Retry{delay: 10 * time.Millisecond}}, func(key string, obj kruntime.Object) error {
		if key == "ns/k" && obj == nil && deletions.Add(1) == 1 {
			close(entered)
			<-release
			runtime.Goexit()
		}
		return nil
	})
	ctx1, cancel1 := context.WithCancel(t.Context())
	if err := c.Start(ctx1, 1); err != nil {
		t.Fatal(err)
	}
	fw.Delete(cm)
	adv4Wait(t, entered, "the first telling of ns/k's deletion")
	cancel1()
	if exitFirst {
		close(release)
		adv5WaitFor(t, "the stopped run's worker to let go of ns/k", func() bool { return !adv5Busy(c) })
	}
	if err := c.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if !exitFirst {
		close(release)
	}
	deadline := time.Now().Add(20 * time.Second)
	for deletions.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("20s after the stopping run's telling of ns/k's deletion called runtime.Goexit, the new run has not told it (told %d time(s), Goexit before the Start: %v)", deletions.Load(), exitFirst)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := deletions.Load(); n != 2 {
		t.Fatalf("the handler was told %d times that ns/k is gone, want twice (the Goexit and the next run's)", n)
	}
}
