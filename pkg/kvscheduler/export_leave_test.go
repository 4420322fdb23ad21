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

// Leaves returns when the model says key's value surely leaves in the
// step, and whether it does.
func (r leaveReport) Leaves(key string) (int32, bool) { return r.ls.leaves(key) }

// Comes returns from when the model says key's value may be available to
// the step's end (-1: it stays; math.MaxInt32: it does not come).
func (r leaveReport) Comes(key string) int32 { return r.ls.comes(key) }

// Leaving returns the keys the model says surely leave, sorted.
func (r leaveReport) Leaving() []string { return r.ls.leaving() }

// LeavingWithin solves the model again within budget rule evaluations and
// returns what it then says surely leaves and whether it stopped at the
// budget; the full solution is restored after.
func (r leaveReport) LeavingWithin(budget int) ([]string, bool) {
	r.ls.exhausted, r.ls.evals = false, 0
	r.ls.solve(budget)
	out, stopped := r.ls.leaving(), r.ls.exhausted
	r.ls.exhausted, r.ls.evals = false, 0
	r.ls.solve(1 << 30)
	return out, stopped
}
