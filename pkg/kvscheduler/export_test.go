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
