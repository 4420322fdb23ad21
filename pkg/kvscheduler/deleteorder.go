package kvscheduler

import (
	"slices"
	"strings"
)

// The delete order, one rule for every way a value goes (a transaction's
// own delete, the delete of a derived value with its base, the Requires
// cascade, a cycle, a resync's delete of what nothing wants): a value is
// deleted after the values that depend on it, of either kind, and whose
// delete the transaction has under way or still to do.
//
// The walk already does so for what a delete reaches itself: derived
// values go first, and the values that Require it are taken down (into
// PENDING) before it. What it does not reach is a dependent the
// transaction deletes by a request of its own further on: one ordered
// after the value (OrderingOnly stays when what it names goes), or one
// nothing wants (read back after a restart: nothing takes it down). Such
// a request, of the dependent or of the base it is derived from, is
// applied right away, before the value goes (see deleteDueDependents);
// so is a dependent's later update that surely takes it away, whatever
// the reason (see updateTakesAway and leaving.go), when the value goes by
// its own update rather than by a delete request (a delete request is
// postponed instead, see postponeTo).
// The end of a delete waits for a dependent whose delete is under way
// (dependentUnderWay), and deletes released together go dependents first
// (dependentsFirst).
// Sorting the transaction's own deletes beforehand could not see the
// values a delete reaches (derived values, what the cascade takes down),
// and left a dependent of those to be deleted after them.

// deleteDueDependents pushes, to run before the end of n's delete (pushed
// already), the transaction's requests further on that take away a value
// depending on n which the walk would otherwise leave in place until then
// (its delete, or an update that surely takes it away), and takes down
// (into PENDING) a dependent that the Requires cascade of such a request
// surely takes away (see cascadeLater).
func (w *walker) deleteDueDependents(n *node) {
	// Asked also in a walk without requests (a notification, a retry):
	// the cascade of a delete under way may surely take a dependent down
	// later in the step (adv5 fuzz seed 708436: n/2's notified removal
	// took b/1 down before r/1 = w|r/2,~b/1, which goes with r/2, whose
	// only n/ provider n/2 is). There, only a dependent that is no
	// derived value is taken down early: the base of a derived one goes
	// by the cascade in the reference's order (TestRefNotifications).
	requests := len(w.dels) > 0 || len(w.values) > 0
	var down []*node // read before the graph changes (see dependents)
	var due []txnValue
	for _, m := range w.g.dependents(n) {
		if m == n || !m.exists() || m.origin == FromSB || m.deleting() || !requests && m.base != "" {
			continue
		}
		b := m
		if m.base != "" {
			if b = w.g.nodes[w.g.baseKey(m)]; b == nil {
				continue
			}
		}
		if b.deleting() {
			continue
		}
		if w.dueUndo(b) {
			continue
		}
		if !w.later(b) || w.laterKeeps(b) {
			// Taken down now, into PENDING, when the cascade of a
			// request further on surely takes it away then (see
			// cascadeLater); a request of its own that keeps its value
			// as it is changes nothing to that (adv5 fuzz seed 314404).
			if m.avail && w.cascadeLater(b, map[*node]bool{n: true}) {
				down = append(down, b)
				continue
			}
			if !w.later(b) {
				continue
			}
		}
		v, ok := w.dueRemoval(b.key)
		if ok && v.group == 1 && !w.cascadeSpares(m, n, nil) {
			// A re-create is applied early only for a dependent that
			// stays while n goes: one the cascade takes down goes
			// before n anyway, and its re-create, applied inside n's
			// delete, would judge its new value while n is going
			// (TestRandomGraphs seed 1240: a/g1/3, Requiring any
			// a/g1/ key, was never created again).
			ok = false
		}
		if ok && v.group == 1 && m == b && m.avail && w.recreateCascades(m, v.value, n) {
			// Its re-create would bring it back while n goes, and the
			// cascade would take it away again after n: it is taken
			// down now instead, and its request, further on, finds it
			// gone (see recreateCascades).
			down = append(down, b)
			continue
		}
		switch {
		case ok && !(m.avail && !w.mayStay(m)):
			// (A dependent the cascade takes down, into PENDING, goes
			// before n anyway.)
			due = append(due, v)
		case !ok:
			if v, ok := w.updateDue(m, b, n); ok {
				due = append(due, v)
			} else if m == b && w.updateCascades(m, n) {
				down = append(down, b)
			}
		}
	}
	w.takeDownEarly(down)
	for _, v := range dueDependentsLast(w.g, due) {
		if w.laterValue(v) { // not pushed by a delete taken down early
			w.pushDue(w.startValue(v))
		}
	}
}

// dueDependentsLast orders due, the requests found due at one delete and
// pushed in that order (the last pushed runs first), so that one
// depending on another of them, of either kind, is pushed after it and
// runs first: the delete order's rule among them (adv5 fuzz seed 7547700:
// r/2's delete and a/1's update into PENDING, both due at d/2's delete,
// ran r/2 first though a/1 = v|~r/2,~d/2 is ordered after r/2; at r/2's
// delete a/1's request had started, so nothing ordered it). Otherwise,
// and in a cycle, the order stands (see dependentsFirst).
func dueDependentsLast(g *graph, due []txnValue) []txnValue {
	if len(due) < 2 {
		return due
	}
	ns := make([]*node, 0, len(due))
	byNode := make(map[*node]txnValue, len(due))
	for _, v := range slices.Backward(due) { // the order they run in
		n := g.nodes[v.key]
		if n == nil || byNode[n].key != "" {
			return due
		}
		ns = append(ns, n)
		byNode[n] = v
	}
	out := make([]txnValue, 0, len(due))
	for _, n := range slices.Backward(dependentsFirst(ns)) {
		out = append(out, byNode[n])
	}
	return out
}

// laterKeeps tells whether x's request further on in the transaction
// keeps the value x holds in the southbound as it is (a resync's request
// of a value in sync): it changes nothing of what x needs, so the cascade
// of another request still takes x away as if x had none (see
// cascadeLater; adv5 fuzz seed 314404: a downstream resync re-created
// b/1 and r/2, and r/1 = w|~b/1,r/2, requested as it was, stayed until
// r/2's re-create took it down, after b/1 went).
func (w *walker) laterKeeps(x *node) bool {
	if !x.exists() || x.sbDeps != nil {
		return false
	}
	v, ok := w.laterTxnValue(x.key)
	return ok && v.value != nil && v.group != 1 && w.equal(x, x.sb, v.value)
}

// updateTakesAway returns the transaction's later request of b, m itself
// or the base m is derived from, m a value depending on n that the
// cascade spares (see cascadeSpares), when it is an update that surely
// takes b away, whatever the reason (see surelyGoes): its new value
// Requires n, which is going (n's own update took it into PENDING or
// INVALID; a delete request of n is postponed after an update of m that
// may keep it, see postponeTo), or another value nothing provides, or it
// is invalid, or derives a key that stays another value's. Applied first,
// m goes before n: a base that goes takes its derived values with it,
// whichever keys its new value derives (adv5 fuzz seed 2200223: d/2,
// whose failed update left in the southbound a value ordered after b/1,
// went after b/1, while b/2's update, into PENDING or INVALID with the
// same derived keys, took it away further on; postponeTo waits only for
// a base's update that no longer derives the key). So is a request of
// m's base that re-creates m or a base between them (see recreatedAbove;
// TestAdv31ResyncReCreateOfADerivedValueGoesBeforeWhatItIsOrderedAfter:
// a full resync's b/2, in sync, re-created its drifted d/2 after a/1, which
// d/2 was ordered after). An update that may
// keep b is left where it is: applied early inside n's delete, it could
// find missing what the transaction creates before it, and go for
// nothing.
func (w *walker) updateTakesAway(m, b, n *node) (txnValue, bool) {
	// A dependent that depends on n only by Requires patterns its own key
	// matches needs nothing of n: it goes in its place, not before n
	// (adv5 fuzz seed 300673: a/3 = v|a/*, its update invalid, went
	// before a/1 = w|~a/3, whose delete it Requires only by a/*).
	if !w.cascadeSpares(m, n, nil) || w.meetsItself(m, n) {
		return txnValue{}, false
	}
	v, ok := w.laterTxnValue(b.key)
	if !ok || v.value == nil || !w.surelyGoes(b, v.value) && !(m != b && w.recreatedAbove(m)) {
		return txnValue{}, false
	}
	return v, true
}

// updateDue returns m's (or its base b's) update further on that is
// applied now, inside n's delete: one that surely takes b away (see
// updateTakesAway) or one that spares m (see updateSpares).
func (w *walker) updateDue(m, b, n *node) (txnValue, bool) {
	if v, ok := w.updateTakesAway(m, b, n); ok {
		return v, true
	}
	return w.updateSpares(m, n)
}

// meetsItself tells whether every dependency of m (as the southbound
// holds it) that n meets is a Requires pattern m's own key matches: m,
// which exists, meets it itself, so n's delete does not concern it.
func (w *walker) meetsItself(m, n *node) bool {
	deps := m.deps
	if m.sbDeps != nil {
		deps = m.sbDeps
	}
	found := false
	for _, dep := range deps {
		if !dep.matchesKey(n.key) {
			continue
		}
		if dep.Kind != Requires || !dep.matchesKey(m.key) {
			return false
		}
		found = true
	}
	return found
}

// dueRemoval returns the transaction's request of key further on that
// deletes its value: a delete, or a re-create, whose delete goes as a
// delete request's does (adv5 fuzz seeds 17627 and 24739: r/2 = w|~a/1,
// re-created, went after a/1, which the cascade of b/1's derived values
// took down). The caller checks that it is still to come.
func (w *walker) dueRemoval(key string) (txnValue, bool) {
	if i, ok := w.dueDelete(key); ok {
		return w.dels[i], true
	}
	if j, ok := w.valueIndex(w.values, key); ok && w.values[j].group == 1 {
		return w.values[j], true
	}
	return txnValue{}, false
}

// dueDelete finds key among the transaction's deletes (sorted by key).
func (w *walker) dueDelete(key string) (int, bool) {
	return slices.BinarySearchFunc(w.dels, key, func(v txnValue, k string) int { return strings.Compare(v.key, k) })
}

// startValue starts applying v, one of the transaction's values: its
// request before it is kept for an undo, it is marked applied, and the
// frame returned applies it.
func (w *walker) startValue(v txnValue) frame {
	if w.rec.Revert {
		var prev *update
		var clash string
		var clashErr error
		if n := w.g.nodes[v.key]; n != nil {
			prev = n.last
			if n.state == Invalid {
				clash, clashErr = w.s.clashed[n], n.err
			}
			if prev == nil && n.base == "" && n.origin == FromSB && n.want != nil {
				// A value obtained from the southbound by a refresh: its
				// value is re-applied (as the reference does), not deleted.
				prev = &update{value: n.want, seq: w.rec.SeqNum}
			}
		}
		w.undos = append(w.undos, undo{v.key, prev, clash, clashErr})
	}
	if v.n != nil {
		w.applyNowNode(v.n)
	} else {
		w.applyNow(v.key)
	}
	return frame{kind: fApply, key: v.key, value: v.value, last: v.last, origin: FromNB, n: v.n}
}

// txnDeletes returns the deletes at the head of vs (group 0), sorted by
// key.
func txnDeletes(vs []txnValue) []txnValue {
	end := 0
	for end < len(vs) && vs[end].group == 0 {
		end++
	}
	return vs[:end:end]
}

// dependentsFirst orders ns, deletes released together (see
// releaseWaiters), so that a value comes before the values among them it
// depends on, of either kind, by the value in the southbound or the
// wanted one: the delete order's rule for deletes that waited, which
// applyValues' marks do not reach (a resync's read releases them before
// the transaction's values are known). Otherwise, and in a cycle, the
// order of ns stands. ns is short: the values that waited for one value.
func dependentsFirst(ns []*node) []*node {
	if len(ns) < 2 {
		return ns
	}
	out := make([]*node, 0, len(ns))
	state := make(map[*node]uint8, len(ns)) // 1 visiting, 2 placed
	var visit func(x *node)
	visit = func(x *node) {
		if state[x] != 0 {
			return
		}
		state[x] = 1
		for _, y := range ns {
			if y != x && (dependsOn(y.deps, x.key) || dependsOn(y.sbDeps, x.key)) {
				visit(y)
			}
		}
		state[x] = 2
		out = append(out, x)
	}
	for _, x := range ns {
		visit(x)
	}
	return out
}

// dependsOn tells whether one of deps names key.
func dependsOn(deps []Dependency, key string) bool {
	for _, dep := range deps {
		if dep.matchesKey(key) {
			return true
		}
	}
	return false
}

// dependentUnderWay names a value in the southbound that depends on n, of
// either kind, and whose delete is under way (started by the walk further
// up, its end still to come): n's delete ends after it (see deferDelete).
// It depends by the value the southbound holds (sbDeps when that is not
// the wanted one): a base being re-created into a value that needs n does
// not hold n's delete back, its old value not needing n (adv5 fuzz seed
// 2332169: a/3, the southbound's, taken over by an invalid value, waited
// for b/2's re-create as w@2|a/3, and so went after d/1, which the
// southbound's a/3 = w|r/1,d/1 needs and b/2's re-create deletes).
// Members of a cycle with n go together.
func (w *walker) dependentUnderWay(n *node) string {
	for _, m := range w.g.dependents(n) {
		if m.sbDeps != nil && !dependsOn(m.sbDeps, n.key) {
			continue
		}
		if m != n && m.exists() && m.deleting() && !w.reaches(n, m) {
			return m.key
		}
	}
	return ""
}

// startDerivedDeletes starts the deletes of n's derived values, last
// first, so that they end in order. A request found due before one of
// them goes (see deleteDueDependents) is pushed once all have started,
// above all their ends: it goes before the first ends, not only before
// the one whose start found it (adv5 fuzz seed 117719: a/3, ordered after
// d/1 and p/1, due at p/1's start, went after d/1, started after p/1).
func (w *walker) startDerivedDeletes(n *node) {
	outer := w.due
	var due []frame
	w.due = &due
	for _, k := range slices.Backward(n.derived) {
		w.applyValue(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
	}
	w.due = outer
	for _, f := range due {
		w.pushDue(f)
	}
}

// pushDue pushes f, a request due before a value goes, or holds it while
// derived values' deletes start (see startDerivedDeletes).
func (w *walker) pushDue(f frame) {
	if w.due != nil {
		*w.due = append(*w.due, f)
		return
	}
	w.push(f)
}
