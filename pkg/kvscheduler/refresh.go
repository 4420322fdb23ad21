package kvscheduler

import (
	"errors"
	"fmt"
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
	byDesc, ambiguous := s.nodesByDescriptor()
	var missing []string
	s.readSince = s.readGen + 1
	for _, desc := range order {
		d := s.reg.byName[desc.Name]
		if d.Retrieve == nil {
			continue
		}
		var correlate []KVWithMetadata
		if first {
			correlate = txnCorrelate(d, txnValues)
		} else {
			correlate = graphCorrelate(byDesc[d])
		}
		missing = s.refreshDescriptor(w, d, correlate, byDesc[d], missing)
	}
	for _, n := range ambiguous {
		missing = s.ambiguousUnreported(w, n, missing)
	}
	s.announce(missing)
}

// nodesByDescriptor returns the graph's nodes of each descriptor, and the
// base values held under a key two descriptors claim (no descriptor is
// theirs), in one pass over the graph (a second one, to count them first,
// costs more than growing the lists).
func (s *Scheduler) nodesByDescriptor() (byDesc map[*regDescriptor][]*node, ambiguous []*node) {
	byDesc = make(map[*regDescriptor][]*node, len(s.reg.order))
	for _, n := range s.g.nodes {
		switch {
		case n.d != nil:
			byDesc[n.d] = appendDoubling(byDesc[n.d], n)
		case n.base == "" && errors.Is(n.dErr(), ErrAmbiguousKey):
			ambiguous = append(ambiguous, n)
		}
	}
	return byDesc, ambiguous
}

// txnCorrelate is what d's Retrieve correlates against in the first full
// resync: the transaction's values d selects, without metadata, as the
// northbound's.
func txnCorrelate(d *regDescriptor, txnValues []KeyValuePair) []KVWithMetadata {
	c := 0
	for _, kv := range txnValues {
		if kv.Value != nil && d.selects(kv.Key) {
			c++
		}
	}
	correlate := make([]KVWithMetadata, 0, c)
	for _, kv := range txnValues {
		if kv.Value != nil && d.selects(kv.Key) {
			correlate = append(correlate, KVWithMetadata{Key: kv.Key, Value: kv.Value, Origin: FromNB})
		}
	}
	return correlate
}

// graphCorrelate is what a descriptor's Retrieve correlates against in a
// later resync: the available base values of its nodes, with their
// metadata and origin.
func graphCorrelate(nodes []*node) []KVWithMetadata {
	correlate := make([]KVWithMetadata, 0, len(nodes))
	for _, n := range nodes {
		if n.avail && n.base == "" {
			correlate = append(correlate, KVWithMetadata{Key: n.key, Value: n.sb, Metadata: n.metadata, Origin: n.origin})
		}
	}
	return correlate
}

// refreshDescriptor reads d back with Retrieve (nodes are d's values in
// the graph), records what it reports, and handles what it no longer
// reports; it returns missing with the keys that went MISSING added. A
// failed or garbled read changes nothing of d's values.
func (s *Scheduler) refreshDescriptor(w *walker, d *regDescriptor, correlate []KVWithMetadata, nodes []*node, missing []string) []string {
	var got []KVWithMetadata
	s.calling(d, "Retrieve", "")
	err := guard(func() (err error) { got, err = d.Retrieve(w.ctx, correlate); return err })
	s.returned()
	if err == nil {
		err = garbled(d, got, nil)
	}
	if err != nil {
		s.markUnread(w.rec, d, err)
		return missing
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
	for _, n := range nodes {
		// A derived value its base's descriptor claims exists as its
		// base does (Retrieve returns base values): one that read does
		// not report is not gone for that; one read by its own
		// descriptor is (see readsItself).
		if !seen.hasNode(n) && s.g.has(n) && (n.base == "" || s.readsItself(n)) {
			missing = s.unreported(w, n, missing)
		}
	}
	return missing
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
