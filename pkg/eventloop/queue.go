package eventloop

import "sync"

// eventKind marks the events the queue must treat specially.
type eventKind uint8

const (
	kindNormal   eventKind = iota
	kindStartup            // may be the startup resync; may overtake held events
	kindShutdown           // stops the loop; closes the queue when accepted
)

// queued is an event with what the loop needs to know about how it arrived.
type queued struct {
	ev       Event
	kind     eventKind
	followUp bool
	parent   uint64 // sequence number of the parent of a follow-up
}

// queue is the bounded FIFO between producers and the loop goroutine. Events
// pushed before the startup resync simply stay in it (in arrival order) while
// the loop picks the resync from the middle, so held events count against
// the bound like any other.
type queue struct {
	mu      sync.Mutex
	items   []queued // items[head:] are waiting
	head    int
	size    int   // bound on waiting events
	err     error // once set, pushes fail with it (ErrClosed or an abort)
	waiting bool  // the loop goroutine sleeps on notify

	// notify wakes the loop goroutine (capacity 1, so a producer never
	// blocks on it).
	notify chan struct{}
	// space is closed to wake producers waiting for room; nil when nobody
	// waits. It is only signalled once the queue is half empty, so that a
	// fast producer is woken once per burst rather than once per event.
	space chan struct{}
}

func newQueue(size int) *queue {
	return &queue{size: size, notify: make(chan struct{}, 1)}
}

func (q *queue) lenLocked() int { return len(q.items) - q.head }

// Len returns the number of waiting events.
func (q *queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lenLocked()
}

// roomLocked reports whether an event of the given kind fits. The startup
// resync may use a second queue's worth of room, so that a burst of early
// events cannot lock the loop out of ever starting; a Shutdown always fits,
// once, because it closes the queue.
func (q *queue) roomLocked(kind eventKind) bool {
	n := q.lenLocked()
	switch kind {
	case kindShutdown:
		return true
	case kindStartup:
		return n < 2*q.size
	default:
		return n < q.size
	}
}

func (q *queue) pushLocked(it queued) {
	q.items = append(q.items, it)
	if q.waiting {
		q.waiting = false
		select {
		case q.notify <- struct{}{}:
		default:
		}
	}
}

// removeLocked takes the waiting event at position i (relative to head).
func (q *queue) removeLocked(i int) queued {
	i += q.head
	it := q.items[i]
	if i == q.head {
		q.items[i] = queued{}
		q.head++
	} else {
		copy(q.items[i:], q.items[i+1:])
		q.items[len(q.items)-1] = queued{}
		q.items = q.items[:len(q.items)-1]
	}
	switch n := q.lenLocked(); {
	case n == 0:
		q.items, q.head = q.items[:0], 0
	case q.head > 64 && q.head >= n:
		// Compact when the dead prefix is at least as long as the live part:
		// amortized O(1) per event, and the backing array stays bounded.
		copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	if q.space != nil && q.lenLocked() <= q.size/2 {
		close(q.space)
		q.space = nil
	}
	return it
}

// takeAllLocked empties the queue, returning the waiting events in order.
func (q *queue) takeAllLocked() []queued {
	items := append([]queued(nil), q.items[q.head:]...)
	clear(q.items)
	q.items, q.head = q.items[:0], 0
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	return items
}
