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
	w.undoOne(u)
}

// dependentUndos returns the indexes in undos, last applied first, of the
// pending undos that take away a value depending on the value u's undo
// takes away: a dependent, a derived value, or one of theirs, and so on.
// Members of a cycle with u's value go together: they are left in place.
func (w *walker) dependentUndos(u undo, undos []undo, pending map[string]int) []int {
	n := w.g.nodes[u.key]
	if len(pending) == 0 || !w.undoTakesAway(n, u) {
		return nil
	}
	var out []int
	seen := map[*node]bool{n: true}
	stack := []*node{n}
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
			if i, ok := pending[y.key]; ok && w.undoTakesAway(y, undos[i]) && !w.reaches(n, y) {
				out = append(out, i)
			}
		}
	}
	slices.SortFunc(out, func(a, b int) int { return b - a })
	return out
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
