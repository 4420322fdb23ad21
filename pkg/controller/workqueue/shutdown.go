package workqueue

// ShutDown stops the queue: Get returns shutdown=true at once, queued and
// delayed items are dropped, and later adds are ignored. Items being
// processed may still be passed to Done. It may be called more than once,
// and it ends a ShutDownWithDrain that is still waiting.
func (q *Queue[T]) ShutDown() {
	q.shutDown(false)
}

// ShutDownWithDrain is ShutDown, then waits until every item handed out by
// Get has been passed to Done, so a controller can stop without abandoning
// work half done. Workers must call Done, or this blocks until ShutDown is
// called.
func (q *Queue[T]) ShutDownWithDrain() {
	q.shutDown(true)
}

func (q *Queue[T]) shutDown(drain bool) {
	q.mu.Lock()
	if !q.shuttingDown {
		q.shuttingDown = true
		q.dropQueuedLocked()
		close(q.stop)
	}
	q.drain = drain
	q.ready.Broadcast()
	if !drain {
		q.drained.Broadcast()
	}
	started := q.delayStarted
	for drain && q.drain && q.nProcessing > 0 {
		q.drained.Wait()
	}
	q.mu.Unlock()
	if started {
		<-q.delayDone
	}
}

// dropQueuedLocked forgets every item that is not being processed.
func (q *Queue[T]) dropQueuedLocked() {
	for item, idx := range q.items {
		if e := q.arena.at(idx); e.state != stateProcessing {
			delete(q.items, item)
			q.arena.release(idx)
		} else {
			e.dirty = false
			q.setDelayedLocked(e, false)
		}
	}
	q.nLive, q.nIdle = q.nProcessing, 0
	q.high.reset()
	q.low.reset()
	q.nLow = 0
	q.delayed = nil
	clear(q.delayIdx)
	q.publishCancellableLocked()
	if q.metrics != nil {
		q.metrics.Depth(0)
	}
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called, so
// producers can stop early.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
