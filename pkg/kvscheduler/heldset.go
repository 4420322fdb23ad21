package kvscheduler

import (
	"slices"
	"strings"
)

// The held value's derived set (issue 25, step 6): what the scheduler
// knows of each key its value in the southbound has or derives. A held
// value has, in the southbound, the derived values it derives, except
// those known absent (deleted while the value there, not changed yet,
// still derives them), plus those left over from an earlier value (their
// delete failed when it changed). The node keeps only these exceptions:
// a value whose derived set is exactly what it derives keeps nothing.
//
// It replaced a list of derived values known absent (removedDerived) once
// the property checks showed the two equal after every job; the
// leftovers, which were found from the derived nodes alone, are checked
// against them after every job still (CheckHeldSet).

// heldKey is one exception of a held value's derived set.
type heldKey struct {
	key string
	// present: the southbound holds it with the value though the value
	// no longer derives it (a leftover); otherwise the value derives it
	// but it is known absent.
	present bool
}

// heldSet returns n's exceptions (nil: none).
func (n *node) heldSet() []heldKey {
	if n.x == nil {
		return nil
	}
	return n.x.held
}

// setHeld records what is known of derived key k of n's held value: kept
// as an exception (absent, or present although not derived), or dropped
// when it is as the value derives it (keep false).
func (n *node) setHeld(k string, keep, present bool) {
	hs := n.heldSet()
	i := slices.IndexFunc(hs, func(h heldKey) bool { return h.key == k })
	switch {
	case keep && i >= 0:
		hs[i].present = present
	case keep:
		n.ext().held = append(hs, heldKey{key: k, present: present})
	case i >= 0:
		hs = slices.Delete(slices.Clone(hs), i, i+1)
		if len(hs) == 0 {
			hs = nil
		}
		n.x.held = hs
		n.tidy()
	}
}

// heldAbsent records that derived key k of n's held value is known absent.
func (n *node) heldAbsent(k string) { n.setHeld(k, true, false) }

// isHeldAbsent tells whether derived key k of n's held value is known
// absent: a read of the value must not take it as existing.
func (n *node) isHeldAbsent(k string) bool {
	for _, h := range n.heldSet() {
		if h.key == k {
			return !h.present
		}
	}
	return false
}

// hasHeldAbsent tells whether a derived value of n's held value is known
// absent.
func (n *node) hasHeldAbsent() bool {
	for _, h := range n.heldSet() {
		if !h.present {
			return true
		}
	}
	return false
}

// isHeldLeftover tells whether derived key k, held with n, is a leftover:
// n's value in the southbound no longer derives it (its delete failed
// when n changed), so it does not need n.
func (n *node) isHeldLeftover(k string) bool {
	for _, h := range n.heldSet() {
		if h.key == k {
			return h.present
		}
	}
	return false
}

// clearHeldAbsent forgets what is known absent of n's held value: its
// value changed, or is gone.
func (n *node) clearHeldAbsent() {
	for _, h := range slices.Clone(n.heldSet()) {
		if !h.present {
			n.setHeld(h.key, false, false)
		}
	}
}

// noteHeld brings the leftovers of the derived sets n is part of up to
// date after what the southbound holds of n, its derived keys or its base
// changed: n's own (as a base), and its base's entry for it.
func (s *Scheduler) noteHeld(n *node) {
	s.noteHeldBase(n)
	if n.base != "" {
		if b := s.g.nodes[n.base]; b != nil {
			s.noteHeldKey(b, n.key, nil)
		}
	}
}

// noteHeldBase recomputes b's leftovers: its derived keys held with it
// that its value in the southbound does not derive.
func (s *Scheduler) noteHeldBase(b *node) {
	s.noteHeldBaseWith(b, &derivesCache{b: b})
}

// noteHeldBaseWith is noteHeldBase, asking dc what b's value derives.
func (s *Scheduler) noteHeldBaseWith(b *node, dc *derivesCache) {
	if len(b.derived) == 0 && len(b.heldSet()) == 0 {
		return
	}
	for _, k := range b.derived {
		s.noteHeldKey(b, k, dc)
	}
	for _, h := range slices.Clone(b.heldSet()) {
		if _, listed := slices.BinarySearch(b.derived, h.key); h.present && !listed {
			b.setHeld(h.key, false, false)
		}
	}
}

// noteHeldKey records whether k is a leftover of b: listed, held with b,
// and not derived by b's value in the southbound (asked of dc, or here
// when dc is nil).
func (s *Scheduler) noteHeldKey(b *node, k string, dc *derivesCache) {
	left := s.g.heldDerived(b, k) != nil
	if !left && len(b.heldSet()) == 0 {
		return // not held, and nothing to drop: the common case
	}
	if left {
		_, left = slices.BinarySearch(b.derived, k)
	}
	if left {
		if dc == nil {
			dc = &derivesCache{b: b}
		}
		left = !dc.has(k)
	}
	if left {
		b.setHeld(k, true, true)
		return
	}
	for _, h := range b.heldSet() {
		if h.key == k && h.present {
			b.setHeld(k, false, false)
			return
		}
	}
}

// derivesCache tells which keys b's value in the southbound derives,
// asking the descriptor at most once (not at all when the value is the
// one its wanted derived values were computed from).
type derivesCache struct {
	b      *node
	kvs    []KeyValuePair
	asked  bool
	sorted bool
}

func (c *derivesCache) has(k string) bool {
	b := c.b
	if !b.exists() || b.d == nil || b.d.DerivedValues == nil {
		return false
	}
	if !c.asked {
		c.asked = true
		if b.derivedFor != nil && (b.derivedSB || identical(b.derivedFor, b.sb)) {
			c.kvs, c.sorted = b.derivedKVs, true // sorted by key (derivedList)
		} else {
			c.kvs, _ = callDerived(b.d, b.key, b.sb)
		}
	}
	if c.sorted {
		_, ok := slices.BinarySearchFunc(c.kvs, k, func(kv KeyValuePair, k string) int { return strings.Compare(kv.Key, k) })
		return ok
	}
	return hasKey(c.kvs, k)
}

// setBase gives n its base and origin, and updates the derived sets n
// leaves and joins when its base changes. n's status names its base and
// shows its last operation only for a value of the northbound's: when
// either changes it is published again, whatever the walk does with n
// next (a blocked value it leaves as it is kept the status of its old
// base, or of the southbound's value it was: seed 2027659).
func (s *Scheduler) setBase(n *node, base string, origin Origin) {
	old := n.base
	if old == base && n.origin == origin {
		return
	}
	n.base, n.origin = base, origin
	s.dirty(n)
	if old == base {
		return
	}
	if b := s.g.nodes[old]; old != "" && b != nil {
		s.noteHeldKey(b, n.key, nil)
	}
	if b := s.g.nodes[n.base]; n.base != "" && b != nil {
		s.noteHeldKey(b, n.key, nil)
	}
}

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
	hs := n.heldSet()
	for _, h := range slices.Backward(slices.Clone(hs)) {
		if h.present {
			continue
		}
		k := h.key
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
	if b := w.g.nodes[n.base]; n.base != "" && b != nil && b.exists() && !b.isHeldAbsent(n.key) {
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

// holdsLeftover tells whether n, not in the southbound, has a derived
// value still there (its held derived set has a leftover): its node stays
// in the graph, even when nothing is wanted there, so that a later
// request of n finds it (see keepLeftovers).
func (n *node) holdsLeftover() bool {
	for _, h := range n.heldSet() {
		if h.present {
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
