package kvscheduler_test

import (
	"flag"
	"fmt"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The exactness check of the leaving set (issue 25, see leaveset.go): with
// -fzleave, each NB transaction of an adv5 fuzz step without injected
// failures builds the model of the values it takes away, and the model
// must name exactly the values the step's record shows leaving (deletes,
// and PENDING or INVALID transitions of values available before it).

var fzLeave = flag.Bool("fzleave", false, "check the model of each step's leaving set against the record (steps without injected failures)")

// With -fzshadow too, every sure answer of the old predictions
// (valueGoes, derivedGoes, cascadeLater, requestTakesAway) about a value
// available before the step must be a leave in the model (design step 3).
var fzShadow = flag.Bool("fzshadow", false, "with -fzleave or -kvleave: the old predictions' sure answers must be leaves of the model")

// fzLeaves collects the leave reports of a scheduler's transactions.
type fzLeaves struct {
	mu      sync.Mutex
	reports []kvscheduler.LeaveReport
}

// fzLeaveStart makes s report its leaving sets when -fzleave is set.
func fzLeaveStart(s *kvscheduler.Scheduler) *fzLeaves {
	l := &fzLeaves{}
	if *fzLeave {
		kvscheduler.CheckLeaveSets(s, func(r kvscheduler.LeaveReport) {
			l.mu.Lock()
			l.reports = append(l.reports, r)
			l.mu.Unlock()
		})
	}
	return l
}

// take returns the first mismatch reported since the last call ("" if
// none), and forgets the reports; check false only forgets them.
func (l *fzLeaves) take(check bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := l.reports
	l.reports = nil
	if !check {
		return ""
	}
	return leaveMismatch(rs)
}

// leaveMismatch describes the first report of rs whose model disagrees
// with its step's record, or whose model stopped at its budget; with
// -fzshadow, first one where an old prediction's sure answer is no leave.
func leaveMismatch(rs []kvscheduler.LeaveReport) string {
	for _, r := range rs {
		if len(r.Shadow) > 0 && *fzShadow {
			return fmt.Sprintf("shadow: #%d: old predictions' sure answers the model keeps %v (%s)",
				r.Seq, r.Shadow, strings.TrimSpace(r.Model))
		}
		if len(r.Extra)+len(r.Missed) > 0 || r.Exhausted {
			return fmt.Sprintf("#%d: model leaves but stayed %v, left but model kept %v, exhausted %v (%s)",
				r.Seq, r.Extra, r.Missed, r.Exhausted, strings.TrimSpace(r.Model))
		}
	}
	return ""
}

// With -kvleave, TestRandomGraphs makes the same check in every NB
// transaction without failures (failure class "leave").
var kvLeave = flag.Bool("kvleave", false, "TestRandomGraphs: check the model of each step's leaving set against the record")

// checkLeave keeps the first mismatch of a step's leaving set, as
// checkModel keeps the first disagreement with the model.
func (r *runner) checkLeave(rep kvscheduler.LeaveReport) {
	msg := leaveMismatch([]kvscheduler.LeaveReport{rep})
	if msg == "" {
		return
	}
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	if r.modelErr == nil {
		r.modelErr = fmt.Errorf("in %s: leave set: %s", r.atStep, msg)
	}
}
