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
