package kvscheduler

// LeaveReport is how one step's model of its leaving set compared with
// what the step did (see endLeaveCheck).
type LeaveReport = leaveReport

// CheckLeaveSets makes every NB transaction of s build the model of its
// leaving set and pass f how it compares with the step's record. Call it
// only while the scheduler is idle.
func CheckLeaveSets(s *Scheduler, f func(LeaveReport)) {
	s.leaveCheck.Store(&f)
}
