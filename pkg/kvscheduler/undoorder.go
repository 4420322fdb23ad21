package kvscheduler

import "slices"

// The undo's delete order: an undo re-applies the requests the values had
// before the transaction, last applied first, and the delete order's rule
// holds in it as in the transaction (see deleteorder.go): a value whose
// undo takes it away (deletes or re-creates it) goes after the values
// depending on it, of either kind, directly or through other values, whose
// undos take them away too. Their undos are applied first.

// undoInOrder applies u (pending by key, with its index in undos) after
// the pending undos that take away a value depending on u's (see
// dependentUndos), each in the same order.
func (w *walker) undoInOrder(u undo, undos []undo, pending map[string]int) {
	delete(pending, u.key)
	for _, i := range w.dependentUndos(u, undos, pending) {
		if _, ok := pending[undos[i].key]; ok {
			w.undoInOrder(undos[i], undos, pending)
		}
	}
	// u stays among the undos still to apply (undoLeft, which the
	// delete order asks, see requestTakesAway) until it runs: the
	// dependents' undos run first on its behalf, and a value their
	// deletes leave in place, which u's undo's cascade takes away later,
	// must go before them (TestAdv24UndoOfADependentCreatedByTheStepKeepsTheOrder:
	// r/1 = w|~a/1,d/*, created by the step, stayed at a/1's undo, and
	// went after a/1 with d/1 by b/2's).
	delete(w.undoLeft, u.key)
	w.undoOne(u)
}

// dependentUndos returns the indexes in undos, last applied first, of the
// pending undos of the values depending on the value u's undo takes
// away (a dependent, a derived value, or one of theirs, and so on) that
// hold a value in the southbound (see undoHolds). Not only those whose
// undo takes the value away: one whose undo keeps it now may be taken
// away by u's undo's cascade (its old request Requires what u's undo
// takes away), and applied after u's, it went after what it was ordered
// after (TestAdv24UndoIntoPendingOfADependentOfADeletedBaseGoesFirst:
// a/3 = w|~d/1, back to v|d/2, went after d/1 and d/2 with b/1); applied
// first, it holds its old value when u's undo runs, and the cascade takes
// it down in order, or it stays.
// Members of a cycle with u's value go together: they are left in place.
// An undo that keeps the value but takes away derived values of it (its
// old value does not derive them) orders the same way from those derived
// values (TestAdv28UndoOfABaseGoesAfterTheDependentOfADerivedValueItReadBack).
func (w *walker) dependentUndos(u undo, undos []undo, pending map[string]int) []int {
	n := w.g.nodes[u.key]
	if len(pending) == 0 {
		return nil
	}
	stack := w.undoRoots(n, u)
	if len(stack) == 0 {
		return nil
	}
	var out []int
	seen := map[*node]bool{n: true}
	for _, r := range stack {
		seen[r] = true
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		next := slices.Clone(w.g.dependents(x))
		for _, k := range x.derived {
			if c := w.g.nodes[k]; c != nil && c.base == x.key {
				next = append(next, c)
			}
		}
		for _, y := range next {
			if seen[y] {
				continue
			}
			seen[y] = true
			stack = append(stack, y)
			if i, ok := pending[y.key]; ok && undoHolds(y) && (!w.reaches(n, y) || w.derivedOutside(n, y)) {
				out = append(out, i)
			}
		}
	}
	slices.SortFunc(out, func(a, b int) int { return b - a })
	return out
}

// undoRoots returns what u's undo takes out of the southbound, from
// which its dependents are found (see dependentUndos): n itself (see
// undoTakesAway), or else the derived values n holds that its old value
// does not derive. If the old value's derived values cannot be known (the
// descriptor panics), every derived value held counts: a dependent's undo
// run first keeps the delete order either way.
func (w *walker) undoRoots(n *node, u undo) []*node {
	if w.undoTakesAway(n, u) {
		return []*node{n}
	}
	if !undoHolds(n) || n.d == nil || n.d.DerivedValues == nil || len(n.derived) == 0 {
		return nil
	}
	prev, err := callDerived(n.d, n.key, u.prev.value)
	var out []*node
	for _, k := range n.derived {
		c := w.g.nodes[k]
		if c != nil && c.base == n.key && c.exists() && (err != nil || !hasKey(prev, k)) {
			out = append(out, c)
		}
	}
	return out
}

// derivedOutside tells whether y, a member of a cycle with n, derives a
// value in the southbound that depends on n and is not in the cycle: it
// goes before n, and only y's undo takes it away, so y's undo goes first
// all the same; n's undo, due inside the delete of y's derived value in
// the cycle, goes then (see dueUndo; adv5 fuzz seed 2016412: d/1, b/2's
// and ordered after r/2, went after r/2, which Requires b/2's d/2).
func (w *walker) derivedOutside(n, y *node) bool {
	for _, k := range y.derived {
		if c := w.g.nodes[k]; c != nil && c.base == y.key && c.exists() && w.reaches(c, n) && !w.reaches(n, c) {
			return true
		}
	}
	return false
}

// undoHolds tells whether y holds a value of the northbound in the
// southbound, which its pending undo changes or takes away (see
// dependentUndos).
func undoHolds(y *node) bool {
	return y != nil && y.exists() && y.origin != FromSB && y.base == ""
}

// undoTakesAway tells whether u's undo takes the value of n (u's key) out
// of the southbound: n holds a value there, of the northbound, and the
// undo deletes it (no request before the transaction), re-creates it
// (its descriptor applies the change by re-creation) or updates it into
// PENDING or INVALID (see surelyGoes).
func (w *walker) undoTakesAway(n *node, u undo) bool {
	if n == nil || !n.exists() || n.origin == FromSB || n.base != "" {
		return false
	}
	if u.prev == nil || u.prev.value == nil {
		return true
	}
	return w.s.txnGroup(txnValue{key: u.key, value: u.prev.value, n: n}) == 1 || w.surelyGoes(n, u.prev.value)
}

// dueUndo pushes, to run before the end of a delete under way (see
// deleteDueDependents), the pending undo of b, a value depending on the
// one going, when that undo takes b away (see undoTakesAway): the read-back of a revert (see
// Scheduler.revert) runs before the undos, and its cascade would
// otherwise take the value down before b, ordered after it, goes (adv5
// fuzz seed 25473). The pending undos that take away b's dependents go
// before it, as undoInOrder applies them, and so do those of the
// requests that took a derived key from b's key (see Scheduler.revert).
// An undo that gives a derived key back to a base the southbound owns
// stays in its place: undoOne marks that key's apply, which a pushed
// frame cannot (see pushable).
func (w *walker) dueUndo(b *node) bool {
	i, ok := w.undoPending[b.key]
	if !ok {
		return false
	}
	u := w.undos[i]
	if !w.undoTakesAway(b, u) || !w.pushable(u) {
		return false
	}
	for _, j := range w.dependentUndos(u, w.undos, w.undoPending) {
		if !w.pushable(w.undos[j]) {
			return false // its order needs undoOne's work: left to the undo
		}
	}
	w.pushUndo(u)
	return true
}

// pushable tells whether u's undo can be pushed as frames (see
// pushUndo): it gives no derived key back to a base the southbound owns,
// whose apply needs the walk told (applyGivenBack), and the takers that
// go first are pushable too.
func (w *walker) pushable(u undo) bool {
	if n := w.g.nodes[u.key]; n != nil {
		for _, k := range n.derived {
			if from, ok := w.takenFrom[k]; ok {
				if p := w.g.nodes[from]; p != nil && p.origin == FromSB {
					return false
				}
			}
		}
	}
	for _, k := range w.takersOf(u.key) {
		if i, ok := w.undoPending[k]; ok && !w.pushable(w.undos[i]) {
			return false
		}
	}
	return true
}

// takersOf returns the keys of the requests and bases that took a
// derived key from key's value: their undos go before key's (see
// Scheduler.revert).
func (w *walker) takersOf(key string) []string {
	return slices.Concat(w.requestsTookFrom(key), w.basesTookFrom(key))
}

// pushUndo pushes u's undo and, above it, the pending undos that take
// away a value depending on u's and those of the takers of u's derived
// keys, each the same way, so that they run first (see undoInOrder and
// Scheduler.revert). undoOne's work around the apply is done here: the
// clash restored and the derived keys given back now, their applies
// pushed below u's so that they run after it.
func (w *walker) pushUndo(u undo) {
	delete(w.undoPending, u.key)
	delete(w.undoLeft, u.key) // (pushed: it runs before the delete under way ends)
	deps := w.dependentUndos(u, w.undos, w.undoPending)
	if u.clash != "" {
		w.restoreClash(u.key, u.clash, u.clashErr)
	}
	back := w.giveBack(u.key)
	for _, g := range slices.Backward(back) {
		w.pushDue(frame{kind: fApply, key: g.kv.Key, value: g.kv.Value, base: g.base.key, origin: g.base.origin})
	}
	w.pushDue(w.undoFrame(u))
	for _, i := range slices.Backward(deps) {
		if _, ok := w.undoPending[w.undos[i].key]; ok {
			w.pushUndo(w.undos[i])
		}
	}
	for _, k := range slices.Backward(w.takersOf(u.key)) {
		if i, ok := w.undoPending[k]; ok {
			w.pushUndo(w.undos[i])
		}
	}
}
