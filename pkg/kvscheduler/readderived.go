package kvscheduler

import (
	"fmt"
	"slices"
)

// readDerived rebuilds, from n's value as read, the derived values of n.
// The derived values exist with their base, as derived from what was
// read (their own descriptors, if any, do not retrieve them); values
// the base no longer derives are gone. A value derived again within
// the same read (derived values that derive each other, a descriptor
// bug) is skipped, and derived values are read to a depth of
// maxDerivedDepth. A key another wanted base derives stays that base's
// (see leftToOther): a key belongs to one base at a time.
// The stack and the keys are buffers reused from one value to the
// next (a resync reads every value).
func (s *Scheduler) readDerived(w *walker, n *node, seen readMarks) {
	stack := append(s.readStack[:0], n)
	depths := append(s.readDepths[:0], 0)
	defer func() {
		clear(stack[:cap(stack)])
		s.readStack, s.readDepths = stack[:0], depths[:0]
	}()
	var visited keySet
	visited.add(n.key)
	for len(stack) > 0 {
		b, depth := stack[len(stack)-1], depths[len(depths)-1]
		stack, depths = stack[:len(stack)-1], depths[:len(depths)-1]
		keys := s.readKeys[:0]
		var kvs []KeyValuePair
		asked := false
		if depth == maxDerivedDepth && b.d != nil && b.d.DerivedValues != nil {
			// A descriptor that derives without end (see derivationErr).
			w.rec.Errors = append(w.rec.Errors, fmt.Errorf("kvscheduler: the derived values of %s did not end; not read past %s", n.key, b.key))
		} else if b.d != nil && b.d.DerivedValues != nil {
			var err error
			kvs, err = callDerived(b.d, b.key, b.sb)
			asked = true
			if err == nil {
				for _, c := range kvs {
					if c.Key == "" || c.Value == nil || visited.has(c.Key) || b.isHeldAbsent(c.Key) ||
						s.leftToOther(w, b, c) {
						continue
					}
					visited.add(c.Key)
					cn := s.derivedRead(w, b, c, seen)
					keys = append(keys, c.Key)
					stack, depths = append(stack, cn), append(depths, depth+1)
				}
			}
		}
		for _, k := range b.derived {
			if slices.Contains(keys, k) {
				continue
			}
			// An obsolete derived value is unavailable; if it was there
			// (its delete failed), it stays listed so that the base's
			// next change deletes it. Its own read, if any, tells.
			if cn := s.g.heldDerived(b, k); cn != nil {
				if cn.avail {
					cn.avail = false
					w.availChanged(cn, false)
				}
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		s.readKeys = keys
		switch {
		case len(keys) == 0:
			b.derived = nil
		case !slices.Equal(keys, b.derived):
			b.derived = slices.Clone(keys)
		}
		// What b's value read derives: the same answer for its set.
		s.noteHeldBaseWith(b, &derivesCache{b: b, kvs: kvs, asked: asked})
	}

}

// derivedRead records derived value c of b, as b's value read derives it,
// and returns its node. Whether the southbound holds it is the rule of
// Descriptor.Retrieve: a derived value whose key a descriptor other than
// its base's claims, one with Retrieve, is read by that descriptor like
// any value (readsItself); any other exists as its base's read derives
// it, unless the scheduler knows better.
func (s *Scheduler) derivedRead(w *walker, b *node, c KeyValuePair, seen readMarks) *node {
	cn := s.g.nodes[c.Key]
	// Reported by this read itself, or by its own descriptor's read of
	// this refresh: the read says what the southbound holds.
	read := cn != nil && seen.hasNode(cn)
	readOwn := cn != nil && cn.readGen >= s.readSince
	// It does not exist (it waits, or its create failed) or an operation
	// on it failed (the southbound holds what was there before).
	known := cn != nil && (!cn.exists() || cn.blocked())
	if cn != nil && cn.base != b.key && cn.origin == FromNB && b.origin == FromSB && cn.want != nil && !cn.exists() {
		// What the scheduler knows of it (it waits, or its create
		// failed) is of its own base's value, not of the southbound's
		// base that derives it now: it exists as that base's read
		// derives it, and its failed create is not retried (adv5 fuzz
		// seed 40632: the retry applied it as the southbound's, an
		// implicit create recorded but never run).
		known = false
		s.clearFailure(cn)
		cn.state, cn.err = Obtained, nil
		cn.setWant(c.Value)
	}
	if cn == nil {
		cn = s.newNode(c.Key)
	}
	// b's delete was dropped as done: the southbound replaced the value
	// it meant by its own (see refreshValue). The delete its derived
	// value had with it is done too: what b's read derives is the
	// southbound's, never deleted (rule 4).
	takenBySB := cn.base == b.key && cn.origin == FromNB && b.origin == FromSB && cn.want == nil
	if cn.base != b.key || cn.origin != b.origin {
		if cn.base == "" && cn.last == nil && readOwn {
			// Read as a base value (its descriptor read before the
			// base's): it is the base's derived value.
			cn.state = NonExistent
			cn.setWant(nil)
		}
		s.setBase(cn, b.key, b.origin)
	}
	if takenBySB {
		s.dropDeleteRequest(cn)
		cn.state = Obtained
		cn.setWant(c.Value)
		known = !cn.exists()
		if readOwn && cn.exists() && s.readsItself(cn) {
			// Its own read found it while its delete blocked it.
			s.found(w, cn, cn.sb)
		}
	}
	// A value read by its own descriptor is what that read, before or
	// after this one, says.
	if !s.readsItself(cn) {
		seen.add(cn)
		if !read && !known {
			s.found(w, cn, c.Value)
		}
	}
	if cn.exists() && cn.want == nil && cn.state == NonExistent {
		cn.state = Discovered
		if cn.origin == FromSB {
			cn.state = Obtained
			cn.setWant(c.Value)
		}
	}
	return cn
}

// readsItself tells whether derived value n is read by its own
// descriptor: one with Retrieve that is not its base's. Its read then says
// whether the southbound holds it, as for any value; a derived value its
// base's own descriptor claims (the VPP-Agent's setup, whose Retrieve
// returns base values) exists as its base's read derives it.
func (s *Scheduler) readsItself(n *node) bool {
	if n.base == "" || n.d == nil || n.d.Retrieve == nil || n.dErr() != nil {
		return false
	}
	b := s.g.nodes[n.base]
	return b == nil || b.d != n.d
}

// derivedByOther tells whether key is another value's than b's: a
// derived value of a base other than b that is wanted (or held) and
// lists it (the base clash.go judged valid when it took the key), or a
// value the northbound requests or the southbound notified (rule 8: the
// scheduler never takes those over). A derived key belongs to at most one
// base at any time, whatever path touches it; a read of b whose held value
// would derive it too (b drifted, or b's update that gave the key away
// failed) finds the southbound's one value there, the other's, and must
// not list it as b's, or b's next change deletes it as obsolete.
func (g *graph) derivedByOther(b *node, key string) bool {
	c := g.nodes[key]
	switch {
	case c == nil || c.base == b.key:
		return false
	case c.base == "":
		return c.last != nil && c.last.value != nil
	}
	return g.listedByBase(c)
}

// listedByBase tells whether derived value c is still its base's: the
// base is wanted (or held) and lists it (it derives it, or it is left
// over from a failed delete).
func (g *graph) listedByBase(c *node) bool {
	b := g.nodes[c.base]
	return b != nil && (b.want != nil || b.exists()) && slices.Contains(b.derived, c.key)
}

// leftToOther tells whether derived value c, which the value of b just
// read derives, is left to the other value whose key it is (see
// derivedByOther; a requested or notified value always keeps it). When
// the other is a base read in this same refresh too, the southbound's two
// bases both derive the key: the key goes to the one whose derived value
// is the one the southbound holds, when the key's own descriptor reads it
// (as its read says, or, not read in this refresh, as the walk left it),
// else to the last read (the walk then judges the clash, rule 8); the
// other base stops listing it, so that one base at most takes it down
// with it.
func (s *Scheduler) leftToOther(w *walker, b *node, c KeyValuePair) bool {
	cn := s.g.nodes[c.Key]
	if cn != nil && cn.base == "" && cn.last == nil && w.readOwned[cn] {
		// Its own read, earlier in the transaction, said it is the
		// southbound's own: never a base's (rule 8, see disown), though
		// a value read without an origin is (see derivedRead).
		return true
	}
	if s.owedLeftover(b, cn, c) {
		return true
	}
	if !s.g.derivedByOther(b, c.Key) {
		return false
	}
	o := s.g.nodes[cn.base]
	if o == nil || o.readGen < s.readSince {
		return true // o's claim stands: its read is not part of this one
	}
	if s.readsItself(cn) && cn.exists() && !identical(cn.sb, c.Value) {
		// The southbound holds o's derived value, not b's: as its own
		// read says, or, when this refresh did not read it (a read-back
		// of the bases only), as the walk left it (o took it over, and
		// that update went through while b's change failed).
		return true
	}
	w.detachDerived(o, c.Key)
	// o still wants a value that derives the key: once b's change lets
	// it go (b's update that had given it to o failed; its retry deletes
	// it), o derives it again, rather than stay CONFIGURED without it.
	s.noteRegain(o, c.Key)
	return false
}

// rederive applies again, once a read-back found it gone, derived value n
// that its base, held and applied by this walk (CONFIGURED, the
// northbound's), derives while n
// failed in it (a delete for the base it had before, seed 900108 of
// -fzdheld -fzcancel -fzcancelall -fzamb -fznotifyall -fzprops -fzinv
// -fzsnap): the base's create could not apply it then, and nothing else
// applies it now; left dropped, the base is CONFIGURED without it.
func (w *walker) rederive(n *node) {
	b := w.g.nodes[n.base]
	if b == nil || n.base == "" || b.origin != FromNB || b.state != Configured || !b.exists() || !b.avail ||
		b.deleting() || b.blocked() || b.want == nil || !w.touchedHere(b) || w.failedHere(b) {
		return // only a base the walk applied: a failed one is read back itself
	}
	for _, kv := range w.derivedOf(b) {
		if kv.Key == n.key {
			w.push(frame{kind: fApply, key: kv.Key, value: kv.Value, base: b.key, origin: b.origin})
			return
		}
	}
}

// owedLeftover tells whether derived value cn, which the value of b just
// read derives as c, is still the northbound's leftover of another base:
// the southbound, as cn's own descriptor reads it, holds a value other
// than b's, and the scheduler owes its delete (nothing wants it; its
// delete failed and waits for its retry or a resync). That base may be
// gone already (a read-back found it removed by hand), so that nothing
// lists cn any more; taken over by b, the southbound's, cn's delete would
// be dropped as the southbound's value's and the old value left in the
// southbound, reported as nothing (seed 17126468).
func (s *Scheduler) owedLeftover(b, cn *node, c KeyValuePair) bool {
	return cn != nil && cn.base != "" && cn.base != b.key && cn.origin == FromNB && cn.want == nil &&
		cn.exists() && s.readsItself(cn) && !identical(cn.sb, c.Value)
}
