package workqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Item states. An item known to the queue is either queued (waiting in one
// of the two FIFOs) or processing (handed out by Get, not yet Done).
const (
	stateQueued uint8 = iota + 1
	stateProcessing
	// stateIdle is an item that was Done and is neither queued nor
	// processing. Its map entry is kept rather than deleted, since that
	// delete was, with a million keys, a cache miss per key: idle entries
	// are swept in bulk (sweepLocked), and an idle item added again needs
	// no insert.
	stateIdle
)

// slot is a FIFO element.
type slot[T comparable] struct {
	item T
	seq  uint64
	// idx is the item's entry, so Get needs no map lookup.
	idx uint32
}

const (
	// shrinkAfter is the peak number of items above which the items map is
	// reallocated once the queue empties, to release a resync's memory.
	shrinkAfter = 4096
	// delayBatch bounds how many delayed items become ready per lock hold,
	// so a mass expiry does not stall workers.
	delayBatch = 1024
	// sweepMin is how many idle items the queue keeps at least before it
	// sweeps them out (see addLocked).
	sweepMin = 1024
)

// Queue is a deduplicating two-priority work queue with delays and rate
// limited retries; see the package documentation for its guarantees. Create
// it with New: the zero value is not usable. Items are map keys, so when T
// is an interface type its dynamic values must be hashable, as with any Go
// map (and client-go's queue).
type Queue[T comparable] struct {
	mu sync.Mutex
	// ready wakes workers blocked in Get.
	ready sync.Cond
	// drained wakes ShutDownWithDrain when the last processing item is Done.
	drained sync.Cond

	// items maps every queued, processing or idle item to its entry in
	// arena.
	items map[T]uint32
	// itemsPeak is the largest len(items) since items was last made (the
	// size of its table). Go maps never shrink, so items is replaced when
	// it empties after a burst.
	itemsPeak int
	arena     arena
	high      fifo[slot[T]]
	low       fifo[slot[T]]
	// nLow counts valid slots in low (low may also hold stale ones).
	nLow        int
	nProcessing int
	// nLive counts the queued and processing items, nIdle the idle ones.
	nLive, nIdle int
	waiters      int
	seq          uint64

	shuttingDown bool
	drain        bool

	// Delayed items: a min-heap by ready time and an index for earliest-wins
	// updates, served by one goroutine started on the first delayed add.
	delayed  delayHeap[T]
	delayIdx map[T]*delayedItem[T]
	// nDue counts the processing items a delayed add made dirty (entries
	// with delayed set).
	nDue int
	// cancellable is len(delayIdx) + nDue, stored after every change of
	// either under mu: while it is 0, CancelAfter has nothing to drop and
	// returns without taking mu, which a controller's workers otherwise
	// take once more per deletion they hand their handlers.
	cancellable  atomic.Int64
	delayStarted bool
	wake         chan struct{}
	stop         chan struct{}
	delayDone    chan struct{}

	clock clock.WithTicker
	// epoch is the base of entry.added.
	epoch   time.Time
	limiter workqueue.TypedRateLimiter[T]
	metrics Metrics
}

// Queue is meant as a drop-in for client-go's rate-limiting queue, so code
// written against that interface (and its fakes) keeps working.
var _ workqueue.TypedRateLimitingInterface[string] = (*Queue[string])(nil)

// New returns an empty, running queue. Call ShutDown (or ShutDownWithDrain)
// when done with it to stop its delay goroutine.
func New[T comparable](opts Options[T]) *Queue[T] {
	q := &Queue[T]{
		items:     make(map[T]uint32),
		delayIdx:  make(map[T]*delayedItem[T]),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		delayDone: make(chan struct{}),
		clock:     opts.Clock,
		limiter:   opts.RateLimiter,
		metrics:   opts.Metrics,
	}
	q.ready.L = &q.mu
	q.drained.L = &q.mu
	if q.clock == nil {
		q.clock = clock.RealClock{}
	}
	q.epoch = q.clock.Now()
	if q.limiter == nil {
		q.limiter = DefaultRateLimiter[T]()
	}
	return q
}

// Add queues item at High priority, the right default for anything that is
// not a resync.
func (q *Queue[T]) Add(item T) {
	q.AddWithPriority(item, High)
}

// AddWithPriority queues item at priority p (values other than Low and High
// are treated as the nearest of the two). See the package documentation for
// how repeated adds are deduplicated and upgraded.
func (q *Queue[T]) AddWithPriority(item T, p Priority) {
	q.AddUnlessUnread(item, p, nil)
}

// addLocked adds item; delayed says the add is a delayed one coming due.
func (q *Queue[T]) addLocked(item T, p Priority, now int64, delayed bool) {
	idx, ok := q.items[item]
	if !ok {
		if len(q.items) >= q.itemsPeak && q.nIdle >= max(q.nLive, sweepMin) {
			// The map is about to outgrow its table, and half of it is
			// idle: make room rather than grow. Until this, idle items
			// only take room the table has, and a queue that drains
			// to empty after a burst never sweeps (see doneLocked).
			q.sweepLocked()
		}
		idx = q.arena.alloc()
		q.items[item] = idx
		q.itemsPeak = max(q.itemsPeak, len(q.items))
		e := q.arena.at(idx)
		e.added = now
		q.nLive++
		q.enqueueLocked(item, idx, e, p)
		return
	}
	e := q.arena.at(idx)
	switch e.state {
	case stateIdle:
		q.nIdle--
		q.nLive++
		e.added = now
		q.enqueueLocked(item, idx, e, p)
	case stateProcessing:
		if !e.dirty {
			e.dirty = true
			q.setDelayedLocked(e, delayed)
			e.prio = int8(p)
			e.added = now
			return
		}
		q.setDelayedLocked(e, e.delayed && delayed)
		if int8(p) > e.prio {
			e.prio = int8(p)
		}
	case stateQueued:
		if int8(p) > e.prio {
			// Low -> High: the Low slot goes stale, the number of ready
			// items is unchanged, and e.added is kept.
			q.nLow--
			q.seq++
			e.seq = q.seq
			e.prio = int8(p)
			q.high.push(slot[T]{item: item, seq: e.seq, idx: idx})
		}
	}
}

func (q *Queue[T]) enqueueLocked(item T, idx uint32, e *entry, p Priority) {
	q.seq++
	e.state = stateQueued
	e.prio = int8(p)
	e.seq = q.seq
	s := slot[T]{item: item, seq: e.seq, idx: idx}
	if p == High {
		q.high.push(s)
	} else {
		q.low.push(s)
		q.nLow++
	}
	if q.waiters > 0 {
		q.ready.Signal()
	}
	if q.metrics != nil {
		q.metrics.Depth(q.high.len() + q.nLow)
	}
}

// Get blocks until an item is ready and hands it out; the caller owns it
// until it calls Done. shutdown is true (and item the zero value) once the
// queue is shutting down, and the worker should then return.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	item, _, shutdown = q.GetTicket()
	return item, shutdown
}

// GetTicket is Get, and also returns the hand-out's Ticket for DoneTicket.
func (q *Queue[T]) GetTicket() (item T, t Ticket, shutdown bool) {
	q.mu.Lock()
	for q.high.len()+q.nLow == 0 && !q.shuttingDown {
		q.waiters++
		q.ready.Wait()
		q.waiters--
	}
	if q.shuttingDown {
		q.mu.Unlock()
		return item, t, true
	}
	var (
		s slot[T]
		e *entry
	)
	if q.high.len() > 0 {
		s = q.high.pop()
		e = q.arena.at(s.idx)
	} else {
		// nLow > 0, so a valid slot exists; skip the stale ones left by
		// upgrades. A stale slot's entry may since have been reused by
		// another item, but never with the same seq.
		for {
			s = q.low.pop()
			if s.idx < q.arena.used {
				e = q.arena.at(s.idx)
				if e.seq == s.seq && e.state == stateQueued {
					break
				}
			}
		}
		q.nLow--
	}
	e.state = stateProcessing
	e.dirty = false
	q.setDelayedLocked(e, false)
	q.nProcessing++
	var added int64
	if q.metrics != nil {
		added = e.added
		q.metrics.Depth(q.high.len() + q.nLow)
	}
	q.mu.Unlock()
	if q.metrics != nil {
		q.metrics.Waited(time.Duration(max(q.now()-added, 0)))
	}
	// An item's seq does not change while it is processing (adds then
	// only mark it dirty), and is never reused, so it tells this hand-out
	// from any later use of the entry.
	return s.item, Ticket{idx: s.idx, seq: e.seq}, false
}

// Done tells the queue that processing item finished, so it may be handed
// out again; if it was added meanwhile it is queued again now. Calling Done
// for an item that is not being processed does nothing.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	idx, ok := q.items[item]
	if !ok {
		q.mu.Unlock()
		return
	}
	e := q.arena.at(idx)
	if e.state != stateProcessing {
		q.mu.Unlock()
		return
	}
	q.doneLocked(item, idx, e)
	q.mu.Unlock()
}

// doneLocked ends the processing of item, whose entry is e at idx.
func (q *Queue[T]) doneLocked(item T, idx uint32, e *entry) {
	q.nProcessing--
	q.setDelayedLocked(e, false)
	if e.dirty && !q.shuttingDown {
		e.dirty = false
		q.enqueueLocked(item, idx, e, Priority(e.prio))
		return
	}
	e.state, e.dirty, e.added = stateIdle, false, 0
	q.nLive--
	q.nIdle++
	if q.nLive == 0 {
		// Nothing is queued, so whatever is left in the Low FIFO is
		// stale; drop it.
		q.low.reset()
		if q.itemsPeak > shrinkAfter || q.shuttingDown {
			// Go maps never shrink: a burst's map and arena go as a
			// whole, not swept.
			q.resetLocked()
		}
	}
	if q.nProcessing == 0 && q.shuttingDown {
		q.drained.Broadcast()
	}
}

// Len returns the number of items ready to be handed out (not those being
// processed or waiting for a delay). It is for metrics and tests only: the
// value may be stale as soon as it is returned.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.high.len() + q.nLow
}

// AddAfter queues item at High priority once d has passed (d <= 0 queues it
// now). If the item already waits for a delay, the earlier ready time wins.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	if d <= 0 {
		q.AddWithPriority(item, High)
		return
	}
	readyAt := q.clock.Now().Add(d)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if w, ok := q.delayIdx[item]; ok {
		if readyAt.Before(w.readyAt) {
			w.readyAt = readyAt
			q.delayed.fix(w.index)
			if w.index == 0 {
				q.wakeDelayLocked()
			}
		}
		return
	}
	w := &delayedItem[T]{item: item, readyAt: readyAt}
	q.delayIdx[item] = w
	q.delayed.push(w)
	q.publishCancellableLocked()
	if !q.delayStarted {
		q.delayStarted = true
		go q.delayLoop()
	} else if w.index == 0 {
		q.wakeDelayLocked()
	}
}

// AddRateLimited retries item after the delay the rate limiter gives it.
// Retries never give up: use Forget when the item succeeded or should not be
// retried.
func (q *Queue[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		return
	}
	if q.metrics != nil {
		q.metrics.Retried()
	}
	q.AddAfter(item, q.limiter.When(item))
}

// Forget clears item's retry history so its next failure starts again from
// the base delay. It does not remove the item from the queue.
func (q *Queue[T]) Forget(item T) {
	q.limiter.Forget(item)
}

// NumRequeues returns how many times item was retried since it was last
// forgotten, so a controller can log or escalate persistent failures.
func (q *Queue[T]) NumRequeues(item T) int {
	return q.limiter.NumRequeues(item)
}

// now returns the current time as nanoseconds since the queue's epoch
// (monotonic with the real clock).
func (q *Queue[T]) now() int64 {
	return int64(q.clock.Since(q.epoch))
}
