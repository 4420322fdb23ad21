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
