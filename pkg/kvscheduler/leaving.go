package kvscheduler

import "slices"

// Which requests take a value away: the delete order's rule is one rule
// for every reason a value goes in a step (see deleteorder.go), so a
// dependent that a later request of the transaction takes away goes
// before what it depends on whatever its request does to it: a new value
// that Requires what goes, that Requires what nothing provides, or that
// is invalid. Only a request that surely takes its value away is applied
// early: one that may keep it, applied before what the transaction
// creates further on, could make it go for nothing.

// surelyGoes tells whether m's request v, applied now, takes m's value
// away whatever the rest of the transaction does before reaching it: v
// is invalid, or it Requires a key that no value provides now, nor may
// provide in this transaction (see mayBeMet).
func (w *walker) surelyGoes(m *node, v any) bool {
	if m.d == nil || m.origin == FromSB {
		return false
	}
	if m.d.Validate != nil && guard(func() error { return m.d.Validate(m.key, v) }) != nil {
		return true
	}
	if m.d.Dependencies == nil {
		return false
	}
	deps, err := callDeps(m.d, m.key, v)
	if err != nil {
		return false
	}
	for _, dep := range deps {
		if dep.Kind == Requires && !w.mayBeMet(m, dep) {
			return true
		}
	}
	return false
}

// mayBeMet tells whether m's dependency dep is met now or may be met in
// this transaction: a provider exists and its delete is not under way, or
// one is wanted (waiting, or failed: what the transaction creates may
// make it ready), or is set or derived by one of the transaction's values.
// A provider whose delete is under way goes: a value whose update took it
// into PENDING or INVALID waits for a later transaction.
func (w *walker) mayBeMet(m *node, dep Dependency) bool {
	met := false
	w.g.providers(m, dep, func(p *node) bool {
		met = !p.deleting() && (p.avail || p.want != nil || w.later(p))
		return !met
	})
	if met {
		return true
	}
	keys := w.txnKeys()
	if dep.Key != "" {
		return w.anyLater(keys[dep.Key])
	}
	for k, at := range keys {
		if dep.matchesKey(k) && w.anyLater(at) {
			return true
		}
	}
	return false
}

// anyLater tells whether one of the transaction's values at indexes is
// still to be applied. One applied already is what it is: its node tells
// (see mayBeMet).
func (w *walker) anyLater(indexes []int) bool {
	for _, i := range indexes {
		if w.laterValue(w.values[i]) {
			return true
		}
	}
	return false
}

// txnKeys returns the keys the transaction's values set (to a value, not
// a delete) or derive, and what those derive in turn, each with the
// indexes of the values that set or derive it, made at the first call: a
// dependency on one of them may be met by the transaction while one of
// those values is still to be applied.
func (w *walker) txnKeys() map[string][]int {
	if w.provides != nil {
		return w.provides
	}
	w.provides = make(map[string][]int)
	type kv struct {
		key   string
		value any
		at    int
	}
	var queue []kv
	for i, v := range w.values {
		if v.value != nil {
			queue = append(queue, kv{v.key, v.value, i})
		}
	}
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if slices.Contains(w.provides[x.key], x.at) {
			continue // derived again through a cycle of derivations
		}
		w.provides[x.key] = append(w.provides[x.key], x.at)
		d, err := w.s.reg.owner(x.key)
		if d == nil || err != nil || d.DerivedValues == nil {
			continue
		}
		kvs, err := callDerived(d, x.key, x.value)
		if err != nil {
			continue
		}
		for _, c := range kvs {
			queue = append(queue, kv{c.Key, c.Value, x.at})
		}
	}
	return w.provides
}
