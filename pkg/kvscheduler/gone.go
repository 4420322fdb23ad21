package kvscheduler

import "slices"

// What a read finds gone: the values a descriptor's Retrieve no longer
// reports leave the southbound's view (and the graph, when nothing wants
// them), and what depends on them is checked again once the resync
// applied its values.

// gone records that n (and its derived values) are not in the southbound.
// Derived values go first; each value goes once, even when derived values
// derive each other (a descriptor bug). With recheck, the values that
// depend on them are checked again once the walk goes on (deleted into
// PENDING): outside a resync, nothing re-creates what they need.
func (s *Scheduler) gone(w *walker, n *node, recheck bool) {
	order := []*node{n}
	seen := map[*node]bool{n: true}
	for i := 0; i < len(order); i++ {
		b := order[i]
		for _, k := range b.derived {
			// A derived value a read of this refresh reported exists,
			// whatever became of its base; one read by its own
			// descriptor is what that read says (every read that finds a
			// base gone reads it too, before or after), and if that read
			// fails it is unknown, not absent.
			if c := s.g.nodes[k]; c != nil && c.base == b.key && !seen[c] && c.readGen < s.readSince && !s.readsItself(c) {
				seen[c] = true
				order = append(order, c)
			}
		}
	}
	for _, m := range order {
		for _, k := range m.derived {
			if c := s.g.nodes[k]; c != nil && c.base == m.key && !seen[c] {
				defer s.orphaned(c) // reported by a read: it stays
			}
		}
	}
	for _, m := range slices.Backward(order) {
		s.goneOne(w, m, recheck)
		if !recheck {
			// Their dependents are checked again after the transaction's
			// values (see recheckRead).
			w.readChanged = append(w.readChanged, readChange{n: m, avail: false})
		}
	}
	// Deletes that waited for them to go go through now: the caller
	// drains the walk (a scoped resync or a retry attempts only its own
	// values again, so nothing else would).
	for _, m := range order {
		w.releaseWaiters(m)
	}
}

func (s *Scheduler) goneOne(w *walker, n *node, recheck bool) {
	n.setSB(nil)
	s.noteHeld(n)
	s.leftoverGone(n)
	if n.avail {
		n.avail = false
		w.availChanged(n, recheck)
	}
	s.setMetadata(n, nil)
	deleteRequested := n.base == "" && n.last != nil && n.last.value == nil
	if n.want == nil && (n.last == nil || n.last.value == nil) || deleteRequested || n.origin == FromSB {
		// Nothing wants it (or the southbound owned it): dropped from
		// the graph. A request not applied yet (the value failed earlier
		// in the transaction) is kept for its retry and resyncs; so is a
		// delete not applied yet: the value it held (taken down into
		// PENDING by a dependency, and failed there) is not wanted any
		// more, and must not be created again (seed 110998).
		n.last, n.state = nil, Removed
		n.setWant(nil)
		// Dropped (rule 4): the southbound is as requested, so nothing
		// of a failure stays either, nor its retry (a failed delete of a
		// value lost behind the scheduler's back stayed FAILED, with no
		// retry when its request was gone).
		s.clearFailure(n)
		s.unwait(n)
		n.err = nil
		n.resetAttempts()
		// Nor does it count as failed in this walk: a base re-created
		// further on in it derives it again (seed 1214 of -fzdheld -fzrb:
		// the derived value of a re-created base, lost behind the
		// scheduler's back, failed its delete, and the base was created
		// again without it).
		w.attemptAgain(n)
		if recheck {
			w.rederive(n)
		}
	}
	s.dirty(n)
}

// recheckRead checks again, once a resync applied its values, the
// dependents of the values whose availability its read changed, if they
// are still as the read found them. A value found gone that the resync did
// not re-create (it waits, or only some keys were resynced) takes what
// depends on it down (PENDING) rather than leave it in the southbound
// without it; one it re-created keeps its dependents untouched. The values
// waiting for one a scoped resync's read found (it applies only its keys)
// are created if it is still there. Those found gone go first.
func (w *walker) recheckRead() {
	for _, avail := range []bool{false, true} {
		for _, c := range w.readChanged {
			if c.avail == avail && w.g.has(c.n) && c.n.avail == avail {
				w.availChanged(c.n, true)
			}
		}
	}
	w.readChanged = nil
	if len(w.stack) > 0 {
		w.drain("the values the read changed")
	}
}

// unreported handles a value of the graph that the descriptor's Retrieve
// no longer reports: gone, and MISSING if it was configured (to be created
// again by the resync), or forgotten if nobody requested it. Its dependents
// are left as they are: the resync re-creates what they need.
func (s *Scheduler) unreported(w *walker, n *node, missing []string) []string {
	if !n.exists() && !n.avail {
		return missing
	}
	configured := n.state == Configured
	s.gone(w, n, false)
	if n.origin == FromNB && n.last != nil && configured {
		n.state = Missing
		if n.last.value == nil {
			n.state = Removed
		}
		missing = append(missing, n.key)
	}
	return missing
}

// forgetUnlisted forgets the derived values of n, listed before n's
// failed delete (listed) and no longer listed since (keepLeftovers keeps
// only those held), that are still wanted though the southbound does not
// hold them. The delete may not even have been applied (a read of n's
// descriptor failed), so they did not go first. Nothing derives them
// while n's value is to go, and a later create of n lists them again
// (pushDerived); left wanted, no list of a base reaches them any more and
// they were reported CONFIGURED without being held (seed 16110856,
// TestAdv33FailedBaseDeleteLeavesNoOrphanConfigured). Their own derived
// values follow.
func (w *walker) forgetUnlisted(n *node, listed []string) {
	for _, k := range listed {
		c := w.g.nodes[k]
		if c == nil || c.base != n.key || c.exists() || c.want == nil || slices.Contains(n.derived, k) {
			continue
		}
		sub := c.derived
		w.keepLeftovers(c)
		w.forgetUnlisted(c, sub)
		c.setWant(nil)
		c.last, c.state = nil, Removed
		w.s.clearFailure(c)
		w.s.unwait(c)
		c.err = nil
		c.resetAttempts()
		if c.avail {
			c.avail = false
			w.availChanged(c, true)
		}
		w.s.dirty(c)
	}
}
