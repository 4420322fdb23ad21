package workqueue

// Ticket names one hand-out of an item by GetTicket, so that DoneTicket
// finds the item's state without looking the item up in the queue's map
// of items: with a million queued keys that lookup is a cache miss, and
// Done's was a third of the queue's dispatch cost. The zero Ticket names
// no hand-out.
type Ticket struct {
	idx uint32
	seq uint64
}

// DoneTicket is Done for the hand-out t that GetTicket returned with item:
// it finds the item's state by t rather than by looking item up. A ticket
// whose hand-out already ended (DoneTicket or Done was called for it) does
// nothing, as Done does for an item that is not processing.
func (q *Queue[T]) DoneTicket(item T, t Ticket) {
	q.mu.Lock()
	if e := q.heldLocked(t); e != nil {
		q.doneLocked(item, t.idx, e)
	}
	q.mu.Unlock()
}

// heldLocked returns the entry of hand-out t if that hand-out has not
// ended, nil otherwise. An entry released since is zeroed (seq 0, which no
// ticket has) and one reused has a later seq, so a stale ticket never
// matches.
func (q *Queue[T]) heldLocked(t Ticket) *entry {
	if t.seq == 0 || t.idx >= q.arena.used {
		return nil
	}
	if e := q.arena.at(t.idx); e.seq == t.seq && e.state == stateProcessing {
		return e
	}
	return nil
}

// sweepLocked forgets every idle item, and resets the storage once no item
// is left, so no slot outlives the index it refers to. It walks the map in
// its table's order, so its deletes are not the cache misses Done's were.
func (q *Queue[T]) sweepLocked() {
	for item, idx := range q.items {
		if q.arena.at(idx).state == stateIdle {
			delete(q.items, item)
			q.arena.release(idx)
		}
	}
	q.nIdle = 0
	if len(q.items) == 0 {
		q.resetLocked()
	}
}

// resetLocked drops every item (every item must be idle) and the memory
// held for them.
func (q *Queue[T]) resetLocked() {
	q.low.reset()
	q.arena.reset()
	q.nIdle = 0
	if q.itemsPeak > shrinkAfter {
		q.items = make(map[T]uint32)
		q.itemsPeak = 0
	} else {
		clear(q.items)
	}
}

// AddUnlessUnread is AddWithPriority, except while item is being processed
// under a hand-out t for which unread(t) is true: that hand-out has still
// to do what the add asks for (pkg/controller: read its object from the
// informer's store, which already holds the change the add is for), so
// item is not queued again after it. unread is called with the queue's
// lock held, so what it reads is decided at one point with the item's
// state; it must not call the queue. A nil unread is AddWithPriority.
func (q *Queue[T]) AddUnlessUnread(item T, p Priority, unread func(t Ticket) bool) {
	p = normalize(p)
	var now int64
	if q.metrics != nil {
		now = q.now()
	}
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	if unread != nil && q.unreadLocked(item, unread) {
		q.mu.Unlock()
		return
	}
	q.addLocked(item, p, now, false)
	q.mu.Unlock()
	if q.metrics != nil {
		q.metrics.Added(p)
	}
}

// unreadLocked tells whether item is being processed under a hand-out for
// which unread is true.
func (q *Queue[T]) unreadLocked(item T, unread func(t Ticket) bool) bool {
	idx, ok := q.items[item]
	if !ok {
		return false
	}
	e := q.arena.at(idx)
	return e.state == stateProcessing && unread(Ticket{idx: idx, seq: e.seq})
}
