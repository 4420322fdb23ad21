package kvscheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// refresh reads back every descriptor with Retrieve, in retrieve-dependency
// order (a full or downstream resync). Retrieve returns base values; their
// derived values are rebuilt from them. The first full resync correlates
// against the transaction's values (without metadata), later ones against
// the values in the graph (with their metadata).
func (s *Scheduler) refresh(w *walker, txnValues []KeyValuePair, first bool) {
	order, err := s.reg.retrieveOrder(nil)
	if err != nil {
		w.rec.Errors = append(w.rec.Errors, err)
		return
	}
	// The nodes of each descriptor, in one pass over the graph (a second
	// one, to count them first, costs more than growing the lists).
	byDesc := make(map[*regDescriptor][]*node, len(s.reg.order))
	var ambiguous []*node
	for _, n := range s.g.nodes {
		switch {
		case n.d != nil:
			byDesc[n.d] = appendDoubling(byDesc[n.d], n)
		case n.base == "" && errors.Is(n.dErr(), ErrAmbiguousKey):
			ambiguous = append(ambiguous, n)
		}
	}
	var missing []string
	s.readSince = s.readGen + 1
	for _, desc := range order {
		d := s.reg.byName[desc.Name]
		if d.Retrieve == nil {
			continue
		}
		var correlate []KVWithMetadata
		if first {
			c := 0
			for _, kv := range txnValues {
				if kv.Value != nil && d.selects(kv.Key) {
					c++
				}
			}
			correlate = make([]KVWithMetadata, 0, c)
			for _, kv := range txnValues {
				if kv.Value != nil && d.selects(kv.Key) {
					correlate = append(correlate, KVWithMetadata{Key: kv.Key, Value: kv.Value, Origin: FromNB})
				}
			}
		} else {
			correlate = make([]KVWithMetadata, 0, len(byDesc[d]))
			for _, n := range byDesc[d] {
				if n.avail && n.base == "" {
					correlate = append(correlate, KVWithMetadata{Key: n.key, Value: n.sb, Metadata: n.metadata, Origin: n.origin})
				}
			}
		}
		var got []KVWithMetadata
		s.calling(d, "Retrieve", "")
		err := guard(func() (err error) { got, err = d.Retrieve(w.ctx, correlate); return err })
		s.returned()
		if err == nil {
			err = garbled(d, got, nil)
		}
		if err != nil {
			s.markUnread(w.rec, d, err)
			continue
		}
		seen := s.newRead()
		corr := &correlation{kvs: correlate}
		for _, kv := range got {
			// One lookup per value read, shared by the checks and the
			// refresh.
			var n *node
			if kv.Key != "" {
				n = s.g.nodes[kv.Key]
			}
			if s.retrievedOK(w, d, kv, n, seen) {
				s.refreshValue(w, d, kv, n, seen, corr)
			}
		}
		for _, n := range byDesc[d] {
			// A derived value its base's descriptor claims exists as its
			// base does (Retrieve returns base values): one that read does
			// not report is not gone for that; one read by its own
			// descriptor is (see readsItself).
			if !seen.hasNode(n) && s.g.has(n) && (n.base == "" || s.readsItself(n)) {
				missing = s.unreported(w, n, missing)
			}
		}
	}
	for _, n := range ambiguous {
		missing = s.ambiguousUnreported(w, n, missing)
	}
	s.announce(missing)
}

// retrievedOK checks a retrieved value (the read is not garbled): a key of
// the descriptor, read once. n is the key's node, if any.
func (s *Scheduler) retrievedOK(w *walker, d *regDescriptor, kv KVWithMetadata, n *node, seen readMarks) bool {
	var why string
	switch {
	case n != nil && seen.hasNode(n) && n.base == "":
		// A derived value its base derived in this read, and that the
		// read reports too, is one value.
		why = "retrieved twice"
	case !(n != nil && n.d == d && n.dErr() == nil) && !d.selects(kv.Key):
		// A node's descriptor is the one that selects its key.
		why = "key not selected by the descriptor"
	}
	if why == "" {
		return true
	}
	w.rec.Errors = append(w.rec.Errors, fmt.Errorf("kvscheduler: retrieve %s: %q skipped: %s", d.Name, kv.Key, why))
	return false
}

// refreshValue records kv, read from the southbound by d, as the value of
// its key, and rebuilds its derived values from it. The origin of a value
// retrieved without one is, in this order: as requested, that of its
// correlate entry (in the first full resync, the transaction's values are
// the northbound's), the descriptor's NBKeyPrefix, else the southbound.
func (s *Scheduler) refreshValue(w *walker, d *regDescriptor, kv KVWithMetadata, n *node, seen readMarks, correlate *correlation) {
	if n == nil {
		n = s.newNode(kv.Key)
	}
	seen.add(n)
	origin := n.origin
	if kv.Origin == FromSB {
		if w.readOwned == nil {
			w.readOwned = map[*node]bool{}
		}
		w.readOwned[n] = true
	}
	if n.base != "" && kv.Origin == FromSB && origin != FromSB {
		// A derived value the read reports as the southbound's own: the
		// southbound held it before its base's create or update reached
		// it (that failed), so it was never the base's (rule 8).
		s.disown(w, n)
	}
	if n.base == "" {
		switch {
		case origin == FromNB && n.last != nil && n.last.value != nil:
			// Requested by the northbound, whatever the read says: the
			// request stands, and the resync applies it (the reference
			// re-applies it as the northbound's after its refresh; a
			// value the read gave to the southbound was left out of a
			// downstream resync and its request lost).
		case origin == FromNB && n.last != nil && n.last.value == nil && kv.Origin == FromSB:
			// The northbound deleted its value and the southbound now
			// holds its own under the key: the value the delete meant is
			// gone, so the delete is done, and the southbound's value is
			// never deleted. Dropped with its failure, its wait and its
			// retry (rule 4), the value is OBTAINED below.
			n.origin = FromSB
			s.dropDeleteRequest(n)
		case kv.Origin != UnknownOrigin:
			n.origin = kv.Origin
		case n.want != nil || n.last != nil:
			// As requested.
		case correlate.origin(kv.Key) != UnknownOrigin:
			n.origin = correlate.origin(kv.Key)
		case d.NBKeyPrefix != "" && strings.HasPrefix(kv.Key, d.NBKeyPrefix):
			n.origin = FromNB
		default:
			n.origin = FromSB
		}
	}
	if n.origin != origin {
		s.dirty(n)
	}
	s.found(w, n, kv.Value)
	s.setMetadata(n, kv.Metadata)
	s.orphaned(n)
	// A base value nobody requested, or a derived value read by its own
	// descriptor that nothing knew of: the southbound's, or found.
	if n.want == nil && n.last == nil && (n.base == "" || n.state == NonExistent || n.state == Removed) {
		if n.origin == FromSB {
			n.state = Obtained
			n.setWant(kv.Value)
		} else {
			n.state = Discovered
		}
	}
	s.readDerived(w, n, seen)
}

// disown makes derived value n, which a read reports as the southbound's
// own, the southbound's (OBTAINED once read, see refreshValue): its base
// stops listing it, so neither the base's delete nor its update deletes or
// overwrites it, and what the base wanted of it (with its failure, wait
// and retry) is dropped. The base still derives the key: the next
// transaction that applies it judges the clash (rule 8: INVALID while the
// southbound holds the key as its own).
func (s *Scheduler) disown(w *walker, n *node) {
	old := n.base
	if b := s.g.nodes[old]; b != nil {
		w.detachDerived(b, n.key)
		s.noteRegain(b, n.key)
	}
	s.setBase(n, "", FromSB)
	s.dropDeleteRequest(n)
}

// dropDeleteRequest drops n's northbound delete request as done, with
// what is left of its failure.
func (s *Scheduler) dropDeleteRequest(n *node) {
	n.last = nil
	n.setWant(nil)
	s.clearFailure(n)
	s.unwait(n)
	n.err = nil
	n.resetAttempts()
	s.dirty(n)
}

// found records that the southbound holds v at n. A value whose delete
// failed stays unavailable (its dependents are not created while it waits
// for its retry), unless the transaction attempts it again (a resync) and
// it is wanted: one nobody wants any more is left to its retry, which
// deletes it, and nothing is created on it meanwhile.
func (s *Scheduler) found(w *walker, n *node, v any) {
	if !identical(n.sb, v) {
		// Another object: an equal one changes only what DumpValues shows
		// (the status is not built from it).
		if n.sb == nil {
			s.dirty(n)
		} else {
			s.dirtyView(n)
		}
		n.setSB(v)
		w.syncSBDeps(n)
	}
	if !n.avail && !(n.blocked() && n.lastOp == OpDelete && !(w.unblocks(n) && w.resyncing() && n.want != nil)) {
		n.avail = true
		// Values waiting for it can be created (a resync of everything
		// applies them anyway; a scoped one checks them again once it
		// applied its values, see recheckFound).
		w.availChanged(n, !w.resyncing())
		if w.resyncing() && !w.kind.unblockAll {
			w.readChanged = append(w.readChanged, readChange{n: n, avail: true})
		}
		s.dirty(n)
	}
}

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

// orphaned makes derived value n, which a read found in the southbound
// while its base is not there, the southbound's own value (OBTAINED, with
// no base) when the southbound owns it: nothing derives it any more, and
// the scheduler never removes the southbound's values. Its base's node is
// no longer kept for it. A base read again derives it again.
func (s *Scheduler) orphaned(n *node) {
	if n.base == "" || n.origin != FromSB || !n.exists() {
		return
	}
	b := s.g.nodes[n.base]
	if b != nil && b.exists() {
		return
	}
	if b != nil {
		s.dirty(b)
	}
	n.state = Obtained
	n.setWant(n.sb)
	s.setBase(n, "", FromSB)
	s.dirty(n)
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
