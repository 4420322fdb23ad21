package kvscheduler

// WaitingDeletes returns the number of entries in the scheduler's list of
// deletes waiting for a dependent to go. Call it only while the scheduler
// is idle.
func WaitingDeletes(s *Scheduler) int {
	n := 0
	for _, ws := range s.waiters {
		n += len(ws)
	}
	return n
}

// BeforeDequeue makes the scheduler's goroutine call f right before it
// takes the next queued job, after its check for due retries.
func BeforeDequeue(s *Scheduler, f func()) {
	s.beforeDequeue.Store(&f)
}

// QueueLen returns the number of jobs queued (not taken yet).
func QueueLen(s *Scheduler) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// BeforeWatchRegistered makes WatchValueStatus call f once it has found
// the scheduler not closed, right before it registers the watch.
func BeforeWatchRegistered(s *Scheduler, f func()) {
	s.beforeWatch.Store(&f)
}

// NodesKeepingRemoved returns the keys whose nodes still refer to a node
// removed from the graph (as the remembered node of their first
// dependency). Call it only while the scheduler is idle.
func NodesKeepingRemoved(s *Scheduler) []string {
	var out []string
	for k, n := range s.g.nodes {
		if n.dep0 != nil && n.dep0.removed {
			out = append(out, k)
		}
	}
	return out
}

// SetWalkBound bounds the scheduler's walks to frames frames (0: the
// default, 64 per value of the graph plus 64), so that a test can make a
// walk exceed its bound. Call it only while the scheduler is idle.
func SetWalkBound(s *Scheduler, frames int) {
	s.walkBound.Store(int64(frames))
}
