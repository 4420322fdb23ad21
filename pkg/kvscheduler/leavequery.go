package kvscheduler

import (
	"fmt"
	"slices"
	"strings"
)

// The questions the leaving set answers (see leaveset.go), and the check
// that compares it with what a step did (tests only: see
// Scheduler.leaveCheck).

// leaves returns when key's value surely leaves in the step, and whether
// it does: it was available before the step and a rule takes it away.
func (ls *leaveSet) leaves(key string) (int32, bool) {
	e := ls.byKey[key]
	if e == nil || !e.avail || e.leave == lvNever {
		return lvNever, false
	}
	return e.leave, true
}

// comes returns from when key's value may be available to the step's end
// (lvBefore: it stays; lvNever: it does not come).
func (ls *leaveSet) comes(key string) int32 {
	if e := ls.byKey[key]; e != nil {
		return e.come
	}
	return lvNever
}

// leaving returns the keys of the values that surely leave, sorted.
func (ls *leaveSet) leaving() []string {
	var out []string
	for _, e := range ls.list {
		if e.avail && e.leave < lvNever {
			out = append(out, e.key)
		}
	}
	return out
}

// leaveReport is how one step's leaving set compared with what the step
// did: the keys the model has leave that stayed (Extra), those that left
// and the model kept (Missed), and whether the model stopped at its
// budget.
type leaveReport struct {
	Seq           uint64
	Extra, Missed []string
	// Shadow are the old predictions' sure answers about values available
	// before the step that the model does not have leave ("by: key").
	Shadow    []string
	Exhausted bool
	// Model describes the model's marks of the keys that do not simply
	// stay as they are.
	Model string
	// ls is the model itself, for the tests of its marks.
	ls *leaveSet
}

// startLeaveCheck builds the leaving set of the transaction's values when
// a test asks for the check, before they are applied; it returns it with
// the number of operations recorded so far.
func (s *Scheduler) startLeaveCheck(w *walker) (*leaveSet, int) {
	if s.leaveCheck.Load() == nil || len(s.resume) > 0 || len(w.values) == 0 {
		return nil, 0
	}
	w.shadowOn = true
	// The model keeps a copy of the walker: keeping w itself would make
	// every transaction's walker escape to the heap (one allocation per
	// transaction, test or not).
	cw := *w
	return cw.buildLeaveSet(0), len(w.rec.Executed)
}

// shadowAnswer is a sure answer of an old prediction: n goes.
type shadowAnswer struct {
	n  *node
	by string
}

// shadow returns sure, and keeps a sure answer of prediction by about n
// while a test checks the predictions against the leaving set: each must
// be a leave of the model (see endLeaveCheck).
func (w *walker) shadow(n *node, sure bool, by string) bool {
	if sure && w.shadowOn && n != nil {
		w.shadowed = append(w.shadowed, shadowAnswer{n, by})
	}
	return sure
}

// endLeaveCheck compares ls with the operations recorded since from,
// unless something the model does not predict happened: a failure (a
// failed read too, which holds operations back), a revert, a
// cancellation or a cut walk.
func (s *Scheduler) endLeaveCheck(w *walker, ls *leaveSet, from int, reverted bool) {
	f := s.leaveCheck.Load()
	if ls == nil || f == nil || reverted || w.topErr || w.canceled != nil || w.walkCut != nil ||
		len(w.failedNs) > 0 || len(s.unread) > 0 {
		return
	}
	left := map[string]bool{}
	for _, op := range w.rec.Executed[from:] {
		if op.Err != nil {
			return
		}
		e := ls.byKey[op.Key]
		if e != nil && e.avail && (op.Operation == OpDelete || op.NewState == Pending || op.NewState == Invalid) {
			left[op.Key] = true
		}
	}
	r := leaveReport{Seq: w.rec.SeqNum, Exhausted: ls.exhausted, ls: ls}
	model := ls.leaving()
	for _, k := range model {
		if !left[k] {
			r.Extra = append(r.Extra, k)
		}
	}
	for k := range left {
		if !slices.Contains(model, k) {
			r.Missed = append(r.Missed, k)
		}
	}
	slices.Sort(r.Missed)
	for _, a := range w.shadowed {
		e := ls.byKey[a.n.key]
		if _, leaves := ls.leaves(a.n.key); e != nil && e.n == a.n && e.avail && !leaves {
			if x := a.by + ": " + a.n.key; !slices.Contains(r.Shadow, x) {
				r.Shadow = append(r.Shadow, x)
			}
		}
	}
	var b strings.Builder
	for _, e := range ls.list {
		if e.leave == lvNever && e.come == lvBefore || !e.avail && e.come == lvNever && e.req == lvNone {
			continue // stays, or stays away
		}
		k := e.key
		by := ""
		if e.by != nil {
			by = e.by.key
		}
		if e.n != nil {
			fmt.Fprintf(&b, "[was %s, base %q, deps %d new %d] ", e.was, e.n.base, len(e.deps), len(e.newDeps))
		}
		fmt.Fprintf(&b, "%s(avail %v): leave %d by %q come %d req %d at %d fresh %v dropAt %d clash %v never %v; ",
			k, e.avail, e.leave, by, e.come, e.req, e.at, e.fresh, e.dropAt, e.clash, e.never)
	}
	r.Model = b.String()
	(*f)(r)
}
