package workqueue

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestAdv1CancelAfterDropsAnAddAfterMadeOnAnotherGoroutine attacks the
// lock-free read of CancelAfter (issue 30, h30a): an AddAfter that returned
// on another goroutine before the cancel (handed over by a channel, no
// lock of the queue's between them) is dropped whichever way the cancel is
// asked for, so the count the cancel reads without the lock is never 0
// while it waits. Then many goroutines add, delay, cancel and process a
// few items at once, and the count, once they are done, is what it
// stands for (len(delayIdx) + nDue): no change of either is left
// unpublished.
func TestAdv1CancelAfterDropsAnAddAfterMadeOnAnotherGoroutine(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	cancels := []func(){
		func() { q.CancelAfter("a") },
		func() { q.CancelAfterTicket("a", Ticket{}) },
	}
	for i := range 2000 {
		added := make(chan struct{})
		go func() {
			q.AddAfter("a", time.Hour)
			close(added)
		}()
		<-added
		cancels[i%len(cancels)]()
		q.mu.Lock()
		pending, published := len(q.delayIdx), q.cancellable.Load()
		q.mu.Unlock()
		if pending != 0 {
			t.Fatalf("round %d: the AddAfter made before the cancel on another goroutine is still pending (count read %d)", i, published)
		}
	}

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				item := fmt.Sprint((g + i) % 3)
				switch i % 4 {
				case 0:
					q.AddAfter(item, time.Duration(i%2)*time.Millisecond+time.Microsecond)
				case 1:
					q.CancelAfter(item)
				case 2:
					q.Add(item)
				default:
					if got, tk, shutdown := q.GetTicket(); !shutdown {
						q.AddAfter(got, time.Microsecond)
						q.CancelAfterTicket(got, tk)
						q.DoneTicket(got, tk)
					}
				}
			}
		})
	}
	wg.Wait()
	q.mu.Lock()
	want, got := int64(len(q.delayIdx)+q.nDue), q.cancellable.Load()
	nDue := 0
	for _, idx := range q.items {
		if e := q.arena.at(idx); e.delayed {
			nDue++
		}
	}
	counted := q.nDue
	q.mu.Unlock()
	if got != want || nDue != counted {
		t.Fatalf("after the storm the cancel reads %d, want %d (len(delayIdx) + nDue); nDue %d, entries marked delayed %d", got, want, counted, nDue)
	}
}
