package kvscheduler

import (
	"fmt"
	"maps"
	"strings"
)

// refresh replaces the actual state of every descriptor with Retrieve by
// what the southbound reports, in retrieve-dependency order. Values of
// descriptors without Retrieve are assumed unchanged.
func (s *Scheduler) refresh(rec *TxnRecord) {
	order, err := s.reg.retrieveOrder(nil)
	if err != nil {
		rec.Errors = append(rec.Errors, err)
		return
	}
	var missing []ValueStatus
	for _, desc := range order {
		d := s.reg.byName[desc.Name]
		if d.Retrieve == nil {
			continue
		}
		var correlate []KVWithMetadata
		for k, dv := range s.desired {
			if o, _ := s.reg.owner(k); o == d {
				correlate = append(correlate, s.correlation(k, dv))
			}
		}
		var got []KVWithMetadata
		returned := s.calling(d, "Retrieve", "")
		err := guard(func() (err error) { got, err = d.Retrieve(correlate); return err })
		returned()
		if err != nil {
			s.markUnread(rec, d, err)
			continue
		}
		seen := make(map[string]bool, len(got))
		for _, kv := range got {
			if kv.Key == "" || kv.Value == nil {
				continue
			}
			seen[kv.Key] = true
			s.setRetrieved(d, kv)
		}
		for k, a := range s.actual {
			if a.d == d && !a.implicit && !seen[k] {
				missing = s.unsetUnreported(k, a, missing)
			}
		}
	}
	s.linkRetrievedDerived()
	s.announce(missing)
}

// correlation is the desired value dv at k as Retrieve is given it, with
// the metadata of the actual value.
func (s *Scheduler) correlation(k string, dv *desiredVal) KVWithMetadata {
	kv := KVWithMetadata{Key: k, Value: dv.value, Origin: FromNB}
	if a := s.actual[k]; a != nil {
		kv.Metadata = a.metadata
	}
	return kv
}

// unsetUnreported forgets the actual value a at k, which its descriptor's
// Retrieve no longer reports; a value of the northbound is added to
// missing, to be announced as MISSING.
func (s *Scheduler) unsetUnreported(k string, a *actualVal, missing []ValueStatus) []ValueStatus {
	if a.origin == FromNB {
		missing = append(missing, ValueStatus{Key: k, State: Missing, LastOp: s.lastOp[k],
			Descriptor: a.d.Name, Derived: a.base != "", BaseKey: a.base})
	}
	s.setActual(k, nil)
	return missing
}

// markUnread records that d's Retrieve failed: what the scheduler last
// believed stays as it was, and no operation of the descriptor runs in this
// transaction on the strength of it.
func (s *Scheduler) markUnread(rec *TxnRecord, d *regDescriptor, err error) {
	re := &RetrieveError{Descriptor: d.Name, Err: err}
	if s.unread == nil {
		s.unread = map[string]*RetrieveError{}
	}
	s.unread[d.Name] = re
	rec.Errors = append(rec.Errors, fmt.Errorf("kvscheduler: %w", re))
}

// announce publishes intermediate statuses (MISSING values found by a
// refresh) before the transaction repairs them.
func (s *Scheduler) announce(sts []ValueStatus) {
	if len(sts) == 0 {
		return
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	// The published map is shared with the history (as the statuses after
	// the last record), so it is replaced rather than modified. Refreshes
	// finding missing values are rare enough for the copy not to matter.
	s.statuses = maps.Clone(s.statuses)
	for i := range sts {
		st := sts[i]
		s.statuses[st.Key] = &sts[i]
		for w := range s.watches {
			w.push(st)
		}
	}
}

// linkRetrievedDerived marks retrieved values that are derived from other
// existing values, so that they are removed with their base rather than as
// obsolete values.
func (s *Scheduler) linkRetrievedDerived() {
	for k := range s.actual {
		s.linkDerivedOf(k)
	}
}

// linkDerivedOf marks the retrieved values derived from the value at k.
func (s *Scheduler) linkDerivedOf(k string) {
	a := s.actual[k]
	if a == nil || a.implicit || a.d == nil || a.d.DerivedValues == nil {
		return
	}
	derived, err := callDerived(a.d, k, a.value)
	if err != nil {
		return
	}
	for _, kv := range derived {
		if c := s.actual[kv.Key]; c != nil && !c.implicit && c.base == "" {
			// Replaced, not modified: published snapshots (DumpValues)
			// share the values with readers.
			nc := *c
			nc.base = k
			if c.origin == FromSB || a.origin == FromNB {
				nc.origin = a.origin
			}
			s.actual[kv.Key] = &nc
		}
	}
}

// setRetrieved records kv, read from the southbound by d's Retrieve, as
// the actual value of its key, deciding its origin when d did not.
func (s *Scheduler) setRetrieved(d *regDescriptor, kv KVWithMetadata) {
	origin := kv.Origin
	prev := s.actual[kv.Key]
	if origin == UnknownOrigin {
		switch {
		case prev != nil && !prev.implicit:
			origin = prev.origin
		case s.desired[kv.Key] != nil || d.NBKeyPrefix != "" && strings.HasPrefix(kv.Key, d.NBKeyPrefix):
			origin = FromNB
		default:
			origin = FromSB
		}
	}
	a := &actualVal{value: kv.Value, metadata: kv.Metadata, origin: origin, d: d}
	if prev != nil {
		a.base = prev.base
	}
	s.setActual(kv.Key, a)
}

// refreshKey re-reads one value after its operation failed, so that the
// scheduler knows what the failure left behind.
func (s *Scheduler) refreshKey(o op) {
	d := o.d
	if d == nil || d.Retrieve == nil && d.RetrieveKeys == nil {
		return
	}
	var correlate []KVWithMetadata
	if dv := s.desired[o.key]; dv != nil {
		correlate = []KVWithMetadata{{Key: o.key, Value: dv.value, Origin: FromNB}}
	}
	got, err := s.retrieveKeys(d, []string{o.key}, correlate)
	if err != nil {
		return
	}
	prev := s.actual[o.key]
	for _, kv := range got {
		if kv.Key != o.key || kv.Value == nil {
			continue
		}
		a := &actualVal{value: kv.Value, metadata: kv.Metadata, origin: FromNB, base: o.base, d: d}
		if prev != nil {
			a.origin, a.base = prev.origin, prev.base
		}
		s.setActual(o.key, a)
		return
	}
	s.setActual(o.key, nil)
}

// applyNotification records a change made by the southbound itself.
func (s *Scheduler) applyNotification(kv KVWithMetadata) {
	if kv.Value == nil {
		s.setActual(kv.Key, nil)
		return
	}
	d, _ := s.reg.owner(kv.Key)
	s.setActual(kv.Key, &actualVal{value: kv.Value, metadata: kv.Metadata, origin: FromSB, d: d})
}
