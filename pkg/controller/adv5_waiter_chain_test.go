package controller

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"weak"
)

// TestAdv5AnEndedRunIsNotHeldByTheWaitersOfAStuckPass (issue 30, h30d's
// attack on h30b's fix of the ended-run chain): run 1's pass of the key is
// stuck past its stop. Run 2, started then, queues every cached key; its
// claim of the key finds run 1's worker on it and waits for it (run 2 is
// put in that worker's waiters). Run 2 is then stopped and ends (its
// worker returned: it held no key), and run 3 starts. Run 2 can never hold
// a key again, so nothing should keep it; but run 1's worker, still in its
// stuck pass and listed in run 3's older runs, keeps run 2 in its waiters,
// with run 2's queue and worker records. Each restart while a pass is
// stuck adds one more ended run to that list, for as long as the pass is.
func TestAdv5AnEndedRunIsNotHeldByTheWaitersOfAStuckPass(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	c := adv3Controller(t, func() {
		if calls.Add(1) == 1 {
			close(entered)
			<-release // run 1's pass, stuck until the test ends
		}
	})
	t.Cleanup(func() { close(release) })

	ctx1, cancel1 := context.WithCancel(t.Context())
	t.Cleanup(cancel1)
	run1, _ := adv3Start(t, c, ctx1)
	waitChan(t, entered, "run 1's pass of the key")
	cancel1() // run 1 is stopping, its pass stuck

	ctx2, cancel2 := context.WithCancel(t.Context())
	t.Cleanup(cancel2)
	run2, done2 := adv3Start(t, c, ctx2)
	adv5WaitFor(t, "run 2's claim of the key to wait for run 1's stuck pass", func() bool {
		return adv5Waits(run1, run2)
	})
	cancel2()
	waitChan(t, done2, "run 2 to end (its workers returned)")

	ctx3, cancel3 := context.WithCancel(t.Context())
	t.Cleanup(cancel3)
	adv3Start(t, c, ctx3)

	if !adv3Collected(run2) {
		t.Errorf("run 2 ended (its workers returned) but is still reachable while run 3 runs: run 1's stuck worker keeps it in its waiters, and run 3's older runs keep run 1")
	}
}

// adv5Waits says whether run o's worker lists run r among its waiters.
// A function of its own, so that the strong pointers it takes are dead
// once it returns.
func adv5Waits(o, r weak.Pointer[run]) bool {
	or, rr := o.Value(), r.Value()
	if or == nil || rr == nil {
		return false
	}
	for _, w := range or.workers {
		w.mu.Lock()
		found := slices.Contains(w.waiters, rr)
		w.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// adv5WaitFor polls cond until it holds, for long enough for a busy
// machine, and fails the test naming what it waited for.
func adv5WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(adv5Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s and still not: %s", adv5Bound, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// adv5Bound bounds adv5WaitFor: far longer than any step takes on a
// loaded machine; it only turns a step never reached into a failure.
const adv5Bound = 2 * time.Minute
