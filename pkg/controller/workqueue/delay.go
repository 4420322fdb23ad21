package workqueue

import (
	"time"

	"k8s.io/utils/clock"
)

// delayedItem is an item waiting for its ready time.
type delayedItem[T comparable] struct {
	item    T
	readyAt time.Time
	// index is the position in the heap, kept up to date so an earlier
	// AddAfter can move the item in O(log n).
	index int
}

// delayHeap is a min-heap by ready time. It is hand-written rather than
// built on container/heap to avoid boxing every element in an interface.
type delayHeap[T comparable] []*delayedItem[T]

func (h delayHeap[T]) less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }

func (h delayHeap[T]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *delayHeap[T]) push(w *delayedItem[T]) {
	w.index = len(*h)
	*h = append(*h, w)
	h.up(w.index)
}

// pop removes and returns the earliest item; the heap must not be empty.
func (h *delayHeap[T]) pop() *delayedItem[T] {
	old := *h
	n := len(old) - 1
	old.swap(0, n)
	w := old[n]
	old[n] = nil
	*h = old[:n]
	h.down(0)
	w.index = -1
	return w
}

// remove takes the item at index i out of the heap.
func (h *delayHeap[T]) remove(i int) {
	old := *h
	n := len(old) - 1
	w := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	w.index = -1
}

// fix restores the heap after the ready time at index i changed.
func (h delayHeap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h delayHeap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down reports whether the element moved.
func (h delayHeap[T]) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > i0
}

// CancelAfter drops item's pending AddAfter (a retry, a hold), if any: its
// pass is no longer wanted. So it does the run again on Done of an item
// being processed that only delayed adds asked for, having come due since
// it was handed out. It never touches the item once queued, nor the run
// again that an Add asked for.
func (q *Queue[T]) CancelAfter(item T) {
	// The zero Ticket is no hand-out's: CancelAfterTicket finds the item
	// by its key, as it does for a hand-out that ended.
	q.CancelAfterTicket(item, Ticket{})
}

// CancelAfterTicket is CancelAfter for an item its caller holds by the
// hand-out t that GetTicket returned with it: it finds the item's state by
// t, as DoneTicket does, rather than by looking item up in the queue's map
// (with a million queued keys that lookup is a cache miss, paid once per
// deletion a controller hands its handlers). A ticket whose hand-out ended
// falls back to the lookup, so the result is CancelAfter's either way.
func (q *Queue[T]) CancelAfterTicket(item T, t Ticket) {
	if q.cancellable.Load() == 0 {
		// No AddAfter pending and no item dirty by one, at this instant:
		// the cancel is a no-op now, and an AddAfter racing with it is
		// one that came after it.
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.heldLocked(t); e != nil {
		q.undelayLocked(e)
	} else if idx, ok := q.items[item]; ok {
		q.undelayLocked(q.arena.at(idx))
	}
	q.cancelDelayLocked(item)
}

// undelayLocked drops the run again of an entry being processed that only
// delayed adds asked for.
func (q *Queue[T]) undelayLocked(e *entry) {
	if e.state == stateProcessing && e.delayed {
		e.dirty = false
		q.setDelayedLocked(e, false)
	}
}

// setDelayedLocked sets e.delayed, keeping nDue and cancellable true.
func (q *Queue[T]) setDelayedLocked(e *entry, delayed bool) {
	if e.delayed == delayed {
		return
	}
	e.delayed = delayed
	if delayed {
		q.nDue++
	} else {
		q.nDue--
	}
	q.publishCancellableLocked()
}

// publishCancellableLocked stores what CancelAfter may find to drop; see
// cancellable.
func (q *Queue[T]) publishCancellableLocked() {
	q.cancellable.Store(int64(len(q.delayIdx) + q.nDue))
}

// cancelDelayLocked drops item's pending AddAfter, if any.
func (q *Queue[T]) cancelDelayLocked(item T) {
	if len(q.delayIdx) == 0 {
		return // the usual case: no retry or hold pending anywhere
	}
	w, ok := q.delayIdx[item]
	if !ok {
		return
	}
	delete(q.delayIdx, item)
	q.delayed.remove(w.index)
	q.publishCancellableLocked()
	// The delay goroutine's timer may be set for it: waking it early only
	// makes it look again.
	q.wakeDelayLocked()
}

// wakeDelayLocked tells the delay goroutine that the earliest ready time
// changed. The channel holds one token, so wakes coalesce and never block.
func (q *Queue[T]) wakeDelayLocked() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// delayLoop moves delayed items to the ready queue when their time comes.
// One goroutine and one timer serve all delayed items of a queue.
func (q *Queue[T]) delayLoop() {
	defer close(q.delayDone)
	var (
		timer   clock.Timer
		timerAt time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if q.shuttingDown {
			q.mu.Unlock()
			return
		}
		now := q.clock.Now()
		ready := int64(now.Sub(q.epoch))
		n := 0
		for n < delayBatch && len(q.delayed) > 0 && !q.delayed[0].readyAt.After(now) {
			w := q.delayed.pop()
			delete(q.delayIdx, w.item)
			q.addLocked(w.item, High, ready, true)
			n++
		}
		if n > 0 {
			q.publishCancellableLocked()
		}
		more := len(q.delayed) > 0
		var next time.Time
		if more {
			next = q.delayed[0].readyAt
		}
		q.mu.Unlock()

		if q.metrics != nil {
			for range n {
				q.metrics.Added(High)
			}
		}
		if n == delayBatch {
			// More may be ready; let workers take the lock before the
			// next batch.
			continue
		}

		var fire <-chan time.Time
		if more {
			if timer == nil || !next.Equal(timerAt) {
				if timer != nil {
					timer.Stop()
				}
				timer = q.clock.NewTimer(next.Sub(q.clock.Now()))
				timerAt = next
			}
			// If the clock passed next before the timer was registered
			// (a fake clock stepped meanwhile, or a slow scheduler), the
			// timer fires late or never: go round again at once.
			if !q.clock.Now().Before(next) {
				continue
			}
			fire = timer.C()
		} else if timer != nil {
			timer.Stop()
			timer = nil
		}

		select {
		case <-q.stop:
			return
		case <-q.wake:
		case <-fire:
			timer = nil
		}
	}
}
