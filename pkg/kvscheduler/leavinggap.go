package kvscheduler

import (
	"maps"
	"math"
	"slices"
)

// When the Requires cascade of the requests further on surely opens a
// gap in a dependency (see cascadeLater): the providers' absences in
// request order.

// depGap tells whether the cascade surely takes x away for its Requires
// dependency dep (see cascadeLater): every provider goes, by a delete
// under way or by a request further on (or the cascade of one), and
// there is a moment when none is there. A provider re-created by the
// request under way, or by a request further on, is back right after
// that request: one back before the last of the others leaves keeps x
// at every moment (TestAdv22DependentOfTwoRecreatedProvidersIsNotTakenAway,
// TestRandomGraphs -kvleave seeds 547 and 929: a/1 Requiring any r/
// key stays while r/1 and r/2 are re-created one after the other). The
// times are those at which the walk applies the requests (see
// requestTime: a postponed delete or re-create goes after the request
// it waits for), the deletes under way before them; a provider taken by
// a cascade or an undo leaves at a time not known here, so with one of
// those the re-creates count as going for good, as a provider that
// surely goes is never counted back.
func (w *walker) depGap(x *node, dep Dependency, seen map[*node]bool, underWayOnly bool) bool {
	ps, comes := w.onlyProviders(x, dep)
	if comes < math.MaxInt {
		comes = w.requestTime(comes)
	}
	all, asking, byRequest, unknown := len(ps) > 0, false, false, false
	last, back := -1, comes
	for _, p := range ps {
		if p.deleting() {
			// The value whose delete asks is the only one in
			// seen that is deleting.
			asking = asking || seen[p]
			if w.backForGood(p, seen) {
				back = -1
			}
			continue
		}
		if underWayOnly {
			return false
		}
		switch at, again, known := w.requestLeaves(p, seen); {
		case known && w.requestTakesAway(p):
			last = max(last, at)
			if again {
				back = min(back, at)
			}
		case w.requestTakesAway(p):
			unknown = true
		case w.cascadeNow(w.baseOf(p), maps.Clone(seen)):
			// Taken by the cascade of a delete under way: it leaves
			// before any request further on is applied. (A copy of
			// seen: what this asks must not pass for a cycle below.)
		case w.cascadeLater(w.baseOf(p), seen):
			unknown = true
		default:
			return false
		}
		byRequest = true
	}
	if comes < math.MaxInt && (unknown || !byRequest) {
		// A provider to come at a time not compared here, or with only
		// deletes under way, whose cascades take x down in their order.
		return false
	}
	if all && byRequest && !unknown && back < last {
		return false
	}
	// The value whose delete asks goes too, but with only deletes
	// under way to take x down, their own cascades do so in their
	// order (TestRandomGraphs seed 14541: a/g1/3 Requires any of
	// d/g0/0/0 and d/g0/0/1, going with their base).
	return all && (!asking || byRequest)
}

// requestLeaves returns the time (see requestTime) of the request
// further on that takes p away, p's own or, for a derived value, its
// base's, when known, and whether it re-creates p with a value that may
// come (see valueGoes) and that no cascade of the step surely takes away
// again (see takenAgain): p is then back right after it, for good. A
// derived value of a derived value, an undo or a value without such a
// request is not known here.
func (w *walker) requestLeaves(p *node, seen map[*node]bool) (at int, again, known bool) {
	b := p
	if p.base != "" {
		if b = w.g.nodes[p.base]; b == nil || b.base != "" {
			return 0, false, false
		}
	}
	if _, ok := w.undoLeft[b.key]; ok {
		return 0, false, false
	}
	v, ok := w.laterTxnValue(b.key)
	if !ok {
		return 0, false, false
	}
	j, _ := w.valueIndex(w.values, b.key)
	at = w.requestTime(j)
	if v.value == nil || v.group != 1 || b.origin == FromSB || w.goes(b, v.value, nil) || w.takenAgain(b, v.value, seen) {
		return at, false, true
	}
	if b == p {
		return at, true, true
	}
	// A derived value comes back with its re-created base when the new
	// value still derives it and its own value may come and stay
	// (TestAdv28DependentOfDerivedProvidersLeavingInTurnIsKept: d/1 back
	// with b/1 while d/2 leaves with b/2).
	dv, ok := derivedValueOf(b, v.value, p.key)
	return at, ok && !w.goes(p, dv, nil) && !w.takenAgain(p, dv, seen), true
}

// derivedValueOf returns the value base b's value v derives for key, and
// whether it derives key.
func derivedValueOf(b *node, v any, key string) (any, bool) {
	if b.d == nil || b.d.DerivedValues == nil {
		return nil, false
	}
	kvs, err := callDerived(b.d, b.key, v)
	if err != nil {
		return nil, false
	}
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// takenAgain tells whether p, re-created with v, is surely taken away
// again by the Requires cascade of the step (see depGap): it is then not
// back for good after its re-create
// (TestAdv28ReCreatedProviderTakenAgainByALaterCascadeIsNotBackForGood:
// b/1 re-created as w|a/8 goes again with a/8's update into PENDING).
// seen, with p added, guards against cycles of such questions.
func (w *walker) takenAgain(p *node, v any, seen map[*node]bool) bool {
	if seen[p] || p.d == nil || p.d.Dependencies == nil || v == nil {
		return false
	}
	deps, err := callDeps(p.d, p.key, v)
	if err != nil {
		return false
	}
	for _, dep := range deps {
		if dep.Kind != Requires {
			continue
		}
		s := maps.Clone(seen)
		s[p] = true
		if w.depGap(p, dep, s, false) {
			return true
		}
	}
	return false
}

// requestTime returns the time at which the walk applies the
// transaction's request values[j], in an order of ints: right at its
// index, or, for a delete or re-create postponed after a request
// further on (see postponeTo), right after that one, with the postponed
// ones in their own order. A request the walk has not reached yet is
// predicted by asking postponeTo now.
func (w *walker) requestTime(j int) int {
	n := len(w.values) + 1
	k, ok := w.postponed[j]
	if !ok {
		k = w.postponeTo(w.values, j)
	}
	if k > j {
		return (2*k+1)*n + j
	}
	return 2 * j * n
}

// postponedAfter notes that the walk applies values[i] after values[j]
// (see requestTime).
func (w *walker) postponedAfter(i, j int) {
	if w.postponed == nil {
		w.postponed = map[int]int{}
	}
	w.postponed[i] = j
}

// comesBack tells whether p, whose delete is under way, is re-created by
// the request under way (its create follows on the stack) and its new
// value may come (see valueGoes): it is back before the transaction's
// requests further on are applied.
func (w *walker) comesBack(p *node) bool {
	if p.base != "" {
		// A derived value comes back with its base's re-create under
		// way when the new value still derives it and its own value
		// may come (TestAdv28DependentOfDerivedProvidersLeavingInTurnIsKept).
		b := w.g.nodes[p.base]
		if b == nil || b.base != "" || !w.comesBack(b) {
			return false
		}
		dv, ok := derivedValueOf(b, b.want, p.key)
		return ok && !w.goes(p, dv, nil)
	}
	if p.want == nil || p.origin == FromSB {
		return false
	}
	// Only a value whose own request, setting a value, is under way can
	// be re-created by it: the stack is not searched for the values a
	// cascade takes down (a chain of 10k would cost its length squared).
	if j, ok := w.valueIndex(w.values, p.key); !ok || w.values[j].value == nil || w.laterValue(w.values[j]) {
		return false
	}
	for _, f := range slices.Backward(w.stack) {
		if f.kind == fCreate && f.n == p {
			return !w.goes(p, p.want, nil)
		}
	}
	return false
}

// backForGood tells whether p, whose delete is under way, comes back
// with the re-create under way (see comesBack) and no cascade of the step
// surely takes it away again (see takenAgain), nor its base's new value.
func (w *walker) backForGood(p *node, seen map[*node]bool) bool {
	if !w.comesBack(p) {
		return false
	}
	if p.base == "" {
		return !w.takenAgain(p, p.want, seen)
	}
	b := w.g.nodes[p.base]
	dv, _ := derivedValueOf(b, b.want, p.key)
	return !w.takenAgain(b, b.want, seen) && !w.takenAgain(p, dv, seen)
}

// recreateCascades tells whether m's re-create further on, applied early
// inside n's delete, would bring back a value v that the Requires cascade
// of the step surely takes away again (see depGap), after n: one of v's
// Requires dependencies has only providers that surely go
// (TestAdv24ReCreateIntoADependentOfTheCascadeGoesFirst: r/2 = v|~a/3,
// re-created as v|a/2,~a/3 inside a/3's delete, came back and went again
// by a/2's cascade after a/3, which it is ordered after).
func (w *walker) recreateCascades(m *node, v any, n *node) bool {
	if m.d == nil || m.d.Dependencies == nil || v == nil {
		return false
	}
	deps, err := callDeps(m.d, m.key, v)
	if err != nil {
		return false
	}
	for _, dep := range deps {
		if dep.Kind == Requires && w.depGap(m, dep, map[*node]bool{n: true, m: true}, false) {
			return true
		}
	}
	return false
}
