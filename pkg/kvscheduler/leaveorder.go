package kvscheduler

import (
	"slices"
	"strings"
)

// The order of the leaving set's requests (see leaveset.go): the model
// counts time in the order the walk applies the step's requests, which
// postponeTo changes, and adds what waiting values bring.

// buildLeaveSet models the step of w's values (see walker.values) from
// the graph as it is now, and solves it within budget rule evaluations (0:
// the default, 32 per entry and request, plus 64: a cycle
// through derived values climbs to the step's end one phase per pass,
// which 8 did not always cover once waiting values' derived values were
// modelled, TestRandomGraphs -kvleave seeds 402, 1235, 2954).
func (w *walker) buildLeaveSet(budget int) *leaveSet {
	ls := w.buildLeaveSetOrdered(budget, nil)
	// An update the model finds going into PENDING or INVALID by its own
	// request is postponed by the walk as a delete is, once it is known
	// to go when the walk reaches it (surelyGoes, asked then on the graph
	// the earlier requests left). Asked before the step, surelyGoes may
	// not know it yet: the model's own answer orders it, and the model is
	// built again in that order (TestRandomGraphs -kvleave seed 2472:
	// a/g0/0's update Requires a/g1/1, which the step creates PENDING, and
	// waits for a/g0/2's update, which no longer needs a/g0/0's d/g0/0/1).
	var goes map[int]bool
	for slot, i := range ls.order {
		v := w.values[i]
		if e := ls.byKey[v.key]; e != nil && e.req == lvUpdate && e.by == nil && e.leave == 4*int32(slot)+1 {
			if goes == nil {
				goes = map[int]bool{}
			}
			goes[i] = true
		}
	}
	if goes == nil {
		return ls
	}
	// Only an update that goes in the new order too: the walk asks
	// surelyGoes with the requests further on that may still bring what
	// it needs, and one that a later request may meet is applied in its
	// place (TestRandomGraphs -kvleave seed 2194: a/g0/0's update
	// Requires any d/g1/, which a/g1/1's update further on derives: it
	// goes PENDING in its place and comes back).
	again := w.buildLeaveSetOrdered(budget, goes)
	kept := map[int]bool{}
	for slot, i := range again.order {
		if e := again.byKey[w.values[i].key]; goes[i] && e.by == nil && e.leave == 4*int32(slot)+1 {
			kept[i] = true
		}
	}
	switch {
	case len(kept) == len(goes):
		return again
	case len(kept) == 0:
		return ls
	}
	return w.buildLeaveSetOrdered(budget, kept)
}

// applyOrder returns the indices of w's values in the order the walk
// applies them (applyValues): a delete, a re-create or an update that
// surely goes, which postponeTo puts after a later request (one that may
// keep or take away a value depending on it, which the cascade spares),
// takes its slot right after that request, not its own. The model's time
// follows that order, the walk's rule, not the reference's: so the
// postponed request judges what the earlier one left (TestRandomGraphs
// -kvleave seed 1195, TestLeaveSetFollowsThePostponedUpdate: a/g1/5's
// update into PENDING waits for a/g1/7's update, which drops the any:d/g0/
// dependency that a/g1/5's cascade would have taken away, so a/g1/7
// stays). The question is asked on the graph as it is before the step,
// the walk asks it as it reaches the value.
// An update in goes is postponed as one that surely goes (postponeGoing).
func (w *walker) applyOrder(goes map[int]bool) []int {
	on := w.shadowOn
	w.shadowOn = false // the walk's own sure answers are the shadow's, not these
	defer func() { w.shadowOn = on }()
	order := make([]int, 0, len(w.values))
	after := map[int][]int{}
	for i := range w.values {
		j := w.postponeTo(w.values, i)
		if j <= i && goes[i] {
			j = w.postponeGoing(w.values, i)
		}
		if j > i {
			after[j] = append(after[j], i)
		} else {
			order = append(order, i)
		}
		order = append(order, after[i]...)
	}
	return order
}

// postponeGoing is postponeTo for values[i], an update of a value that
// exists, taken for one that surely goes.
func (w *walker) postponeGoing(values []txnValue, i int) int {
	n := values[i].n
	if i == len(values)-1 || n == nil || !n.exists() {
		return -1
	}
	at := -1
	leaving := w.leavingWith(n)
	for _, x := range leaving {
		for _, m := range w.g.dependents(x) {
			if !w.leavesWith(m, n) {
				at = max(at, w.postponeFor(values, i, x, m, leaving))
			}
		}
	}
	return at
}

// waitingDerived adds the derived values of the waiting values the step
// does not request: they come right after their base, if it comes
// (TestRandomGraphs -kvleave seed 2397, TestLeaveSetDerivedValueOfAWaitingValueComes:
// a/g1/5, PENDING for a/g0/2, created with a/g0/2, brings p/g1/5/0, which
// a/g0/0's update further on Requires).
func (ls *leaveSet) waitingDerived() {
	var bases []*lvEntry
	for _, e := range ls.byKey {
		if e.waits && e.req == lvNone && !e.fresh && e.n.want != nil && e.n.d != nil && e.n.d.DerivedValues != nil {
			bases = append(bases, e)
		}
	}
	slices.SortFunc(bases, func(a, b *lvEntry) int { return strings.Compare(a.key, b.key) })
	for _, b := range bases {
		kvs, err := callDerived(b.n.d, b.key, b.n.want)
		if err != nil {
			continue
		}
		for _, kv := range kvs {
			c := ls.entry(kv.Key)
			if c.base != nil || c.req != lvNone || c.at >= 0 || c.avail {
				continue // the step's requests decide it, or another base holds it
			}
			// (Its derived values in turn are left out: one level.)
			c.base, c.fresh = b, true
			ls.judge(c, kv.Value)
		}
	}
}
