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
// This representation is kept beside the older one it replaces
// (removedDerived, and leftovers found from the derived nodes, see
// leftover.go) until the property checks show them equal after every
// step (see checkHeldSet); then the older one goes.

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
	if len(b.derived) == 0 && len(b.heldSet()) == 0 {
		return
	}
	dc := derivesCache{b: b}
	for _, k := range b.derived {
		s.noteHeldKey(b, k, &dc)
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
	_, listed := slices.BinarySearch(b.derived, k)
	left := listed && s.g.heldDerived(b, k) != nil
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
		if b.derivedFor != nil && identical(b.derivedFor, b.sb) {
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

// noteBaseMoved updates the derived sets n leaves and joins when its base
// changes from old to n.base.
func (s *Scheduler) noteBaseMoved(n *node, old string) {
	if old == n.base {
		return
	}
	if b := s.g.nodes[old]; old != "" && b != nil {
		s.noteHeldKey(b, n.key, nil)
	}
	if b := s.g.nodes[n.base]; n.base != "" && b != nil {
		s.noteHeldKey(b, n.key, nil)
	}
}
