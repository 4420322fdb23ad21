package workqueue

import (
	"testing"
	"time"
)

// TestCancelAfter: a cancelled AddAfter never queues its item, and the
// other delayed items keep their order, whatever the cancelled one's place
// in the heap.
func TestCancelAfter(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	for i, item := range []string{"a", "b", "c", "d", "e"} {
		q.AddAfter(item, time.Duration(10*(i+1))*time.Second)
	}
	q.CancelAfter("a") // the root
	q.CancelAfter("d") // a leaf
	q.CancelAfter("x") // never delayed: nothing
	waitTimer(t, clk)
	clk.Step(time.Minute)
	eventually(t, "the delayed items to be queued", func() bool { return q.Len() == 3 })
	for _, want := range []string{"b", "c", "e"} {
		got, _ := q.Get()
		if got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
		q.Done(got)
	}
	q.AddAfter("a", time.Second) // cancelled once, it can be delayed again
	waitTimer(t, clk)
	clk.Step(time.Second)
	eventually(t, "a, delayed again, to be queued", func() bool { return q.Len() == 1 })
	settle()
	if got := q.Len(); got != 1 {
		t.Fatalf("Len = %d after one AddAfter, want 1", got)
	}
}

// TestCancelAfterDropsADelayedAddThatCameDueWhileProcessing: an AddAfter
// of an item being processed that came due before CancelAfter (the item
// only marked to run again on Done) is dropped too, unless an Add also
// asked for the item meanwhile: that one stands. CancelAfterTicket does
// the same by the hand-out's ticket, and by the item when the ticket names
// no hand-out under way.
func TestCancelAfterDropsADelayedAddThatCameDueWhileProcessing(t *testing.T) {
	cancels := map[string]func(q *Queue[string], held Ticket){
		"CancelAfter":                    func(q *Queue[string], _ Ticket) { q.CancelAfter("a") },
		"CancelAfterTicket":              func(q *Queue[string], held Ticket) { q.CancelAfterTicket("a", held) },
		"CancelAfterTicket, zero ticket": func(q *Queue[string], _ Ticket) { q.CancelAfterTicket("a", Ticket{}) },
	}
	for name, cancel := range cancels {
		for _, alsoAdded := range []bool{false, true} {
			q, clk := newFakeClockQueue(t, Options[string]{})
			q.Add("a")
			got, held, _ := q.GetTicket()
			if got != "a" {
				t.Fatalf("Get = %q, want a", got)
			}
			q.AddAfter("a", time.Second)
			if alsoAdded {
				q.Add("a")
			}
			// b comes due with a, in the same batch of the delay goroutine:
			// once b is queued, a's delayed add has come due.
			q.AddAfter("b", time.Second)
			waitTimer(t, clk)
			clk.Step(time.Second)
			eventually(t, "b to be queued", func() bool { return q.Len() == 1 })
			cancel(q, held)
			q.DoneTicket("a", held)
			want := []string{"b"}
			if alsoAdded {
				want = []string{"b", "a"}
			}
			if got := q.Len(); got != len(want) {
				t.Fatalf("%s, added during processing too: %v; Len after Done = %d, want %d (%v)", name, alsoAdded, got, len(want), want)
			}
			for _, w := range want {
				got, _ := q.Get()
				if got != w {
					t.Fatalf("%s, added during processing too: %v; Get = %q, want %q", name, alsoAdded, got, w)
				}
				q.Done(got)
			}
		}
	}
}

// TestCancelAfterWithNothingDelayedTakesNoLock: with no AddAfter pending
// and no item dirty by one, CancelAfter returns without the queue's lock
// (here held by the test), also after a delay came due while its item was
// processing and every item is done again.
func TestCancelAfterWithNothingDelayedTakesNoLock(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	returnsWhileLocked := func(what string) {
		t.Helper()
		q.mu.Lock()
		defer q.mu.Unlock()
		done := make(chan struct{})
		go func() { q.CancelAfter("a"); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: CancelAfter waited for the lock with nothing to cancel", what)
		}
	}
	returnsWhileLocked("new queue")
	q.Add("a")
	got, held, _ := q.GetTicket()
	q.AddAfter(got, time.Second)
	q.CancelAfter(got) // takes the lock, and drops it
	if n := q.cancellable.Load(); n != 0 || len(q.delayIdx) != 0 {
		t.Fatalf("after CancelAfter: cancellable = %d, %d delayed, want 0 and 0", n, len(q.delayIdx))
	}
	q.AddAfter(got, time.Second)
	waitTimer(t, clk)
	clk.Step(time.Second)
	eventually(t, "a's delayed add to come due", func() bool { return q.cancellable.Load() == 1 && q.dueCount() == 0 })
	q.DoneTicket(got, held) // queued again: the delayed add came due
	got, held, _ = q.GetTicket()
	q.DoneTicket(got, held)
	returnsWhileLocked("delays done with")
}

// dueCount is len(q.delayIdx), read under the lock.
func (q *Queue[T]) dueCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.delayIdx)
}
