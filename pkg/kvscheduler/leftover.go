package kvscheduler

import "slices"

// What the southbound holds of a value apart from what the graph lists:
// derived values left over by a failed delete (its value no longer derives
// them) and properties taken for gone by a delete of the value that then
// failed. Both are the value's as long as it is in the southbound.

// recheckPropertyDependents re-checks, before n's delete ends, the
// values that depend on a property of n taken for gone by an earlier
// delete of n that then failed (see knownAbsent): a property exists as
// long as its base does, so they still count on n, but the graph no
// longer leads from n to them. Those with no other provider go PENDING
// first, as n's own dependents do; refusing n's delete for them ("not
// deleted: X, which depends on it, still exists") reported a failure for
// a delete that went through later in the same transaction, once another
// provider was created (seed 36925).
func (w *walker) recheckPropertyDependents(n *node) {
	for _, k := range slices.Backward(n.removedDerived()) {
		c := w.g.nodes[k]
		switch {
		case c == nil:
			if d, err := w.s.reg.owner(k); d != nil || err != nil {
				continue // a derived value of a descriptor: deleted
			}
			c = &node{key: k, removed: true} // only its key is looked at
		case c.d != nil:
			continue
		}
		for _, m := range slices.Backward(w.g.dependents(c)) {
			if m != n && m.avail {
				w.pushRecheck(m)
			}
		}
	}
}

// knownAbsent records, for a derived value the scheduler knows is not in
// the southbound, that its base's value there must not be read back as
// having it (see refreshValue).
func (w *walker) knownAbsent(n *node) {
	if b := w.g.nodes[n.base]; n.base != "" && b != nil && b.exists() && !slices.Contains(b.removedDerived(), n.key) {
		b.setRemovedDerived(append(b.removedDerived(), n.key))
		b.heldAbsent(n.key)
	}
}

// keepLeftovers lists, as n's derived values once n is deleted, only
// those still in the southbound: derived values left over from an earlier
// value of n (their delete failed), which did not need n. They are n's
// all the same: a read that finds n gone takes them with it, and n's
// next create deletes them (see pushDerived). Dropped from the list, they
// outlived a loss of n in the scheduler's belief, and their retries
// deleted for ever what the southbound no longer held (seed 50410).
func (w *walker) keepLeftovers(n *node) {
	var left []string
	for _, k := range n.derived {
		if w.g.heldDerived(n, k) != nil {
			left = append(left, k)
		}
	}
	n.derived = left
}

// holdsLeftover tells whether n lists a derived value still in the
// southbound with n as base: its node stays in the graph, even when
// nothing is wanted there, so that a later request of n finds it (see
// keepLeftovers).
func (g *graph) holdsLeftover(n *node) bool {
	for _, k := range n.derived {
		if g.heldDerived(n, k) != nil {
			return true
		}
	}
	return false
}

// heldDerived returns k's node when the southbound holds k as a derived
// value of n, as far as the scheduler knows (k's node names n as its base
// and its value is present), nil otherwise: the one test of "n's value
// there has k", for the walk's deletes, updates and reads alike.
func (g *graph) heldDerived(n *node, k string) *node {
	if c := g.nodes[k]; c != nil && c.base == n.key && c.exists() {
		return c
	}
	return nil
}

// leftoverGone notes that derived value n is no longer in the southbound:
// its base, kept in the graph for it alone (see holdsLeftover), is
// published again, and dropped then if nothing else keeps it.
func (s *Scheduler) leftoverGone(n *node) {
	if b := s.g.nodes[n.base]; n.base != "" && b != nil && b.want == nil && !b.exists() {
		s.dirty(b)
	}
}
