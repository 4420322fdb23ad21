package controller

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestAdv3PassOfTheRunBeforeTheLastExcludesTheNewest restarts a controller
// twice through Start (issue 30, h30a): the first run's pass of the key is
// stuck past its stop; the second run is started and stopped while the
// first stops; the third starts while both stop and, re-queueing every
// cached key, takes the key. It must not call the handler while the first
// run's pass is under way (its claim reads the workers of every run still
// stopping, not only the last one's): it puts the key aside as a waiter of
// the first run's worker, and handles it once that pass ends, one pass at
// a time.
func TestAdv3PassOfTheRunBeforeTheLastExcludesTheNewest(t *testing.T) {
	var inFlight, most atomic.Int32
	entered, release := make(chan struct{}, 4), make(chan struct{})
	c := adv3Controller(t, func() {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		<-release
		inFlight.Add(-1)
	})
	t.Cleanup(func() { close(release) })
	ctx1, stop1 := context.WithCancel(t.Context())
	first := adv3StartRun(t, c, ctx1)
	waitChan(t, entered, "the first run's pass of the key")
	stop1() // its pass still runs
	ctx2, stop2 := context.WithCancel(t.Context())
	adv3StartRun(t, c, ctx2)
	stop2()
	third := adv3StartRun(t, c, t.Context())

	// The third run's worker took the key and put it aside: it waits for
	// the first run's pass.
	deadline := time.After(30 * time.Second)
	for !adv3Waits(first.workers[0], third) {
		select {
		case <-entered:
			t.Fatalf("the third run called the handler while the first run's pass of the key was under way (%d passes at once)", most.Load())
		case <-deadline:
			t.Fatal("timed out waiting for the third run to put the key aside for the first run's pass")
		case <-time.After(time.Millisecond):
		}
	}
	release <- struct{}{} // the first run's pass ends
	waitChan(t, entered, "the third run's pass of the key queued again")
	release <- struct{}{}
	if m := most.Load(); m != 1 {
		t.Errorf("%d passes of the key ran at once, want 1", m)
	}
}

// adv3StartRun starts c with one worker under ctx and returns the new run.
func adv3StartRun(t *testing.T, c *controller, ctx context.Context) *run {
	t.Helper()
	c.startLock.Lock()
	before := map[*run]bool{}
	for r := range c.runs {
		before[r] = true
	}
	c.startLock.Unlock()
	if err := c.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.startLock.Lock()
	defer c.startLock.Unlock()
	for r := range c.runs {
		if !before[r] {
			return r
		}
	}
	t.Fatal("Start added no run")
	return nil
}

// adv3Waits says whether r waits for w's pass.
func adv3Waits(w *worker, r *run) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.active && slices.Contains(w.waiters, r)
}
