package kvscheduler

// refreshKeys is the refresh of a scoped downstream resync
// (Txn.WithResyncKeys): it re-reads the values of keys only, asking each
// of their descriptors once, in retrieve-dependency order. Its cost is in
// proportion to the keys, not to the values the scheduler holds, as long
// as the descriptors implement RetrieveKeys. Keys no descriptor claims, or
// whose descriptor cannot retrieve, stay as the scheduler believes them.
func (s *Scheduler) refreshKeys(rec *TxnRecord, keys []string) {
	byDesc := map[*regDescriptor][]string{}
	for _, k := range keys {
		d, err := s.reg.owner(k)
		if err != nil || d == nil || d.Retrieve == nil && d.RetrieveKeys == nil {
			continue
		}
		byDesc[d] = append(byDesc[d], k)
	}
	if len(byDesc) == 0 {
		return
	}
	order, err := s.reg.retrieveOrder(nil)
	if err != nil {
		rec.Errors = append(rec.Errors, err)
		return
	}
	var missing []ValueStatus
	for _, desc := range order {
		d := s.reg.byName[desc.Name]
		ks := byDesc[d]
		if len(ks) == 0 {
			continue
		}
		var correlate []KVWithMetadata
		for _, k := range ks {
			if dv := s.desired[k]; dv != nil {
				correlate = append(correlate, s.correlation(k, dv))
			}
		}
		got, err := s.retrieveKeys(d, ks, correlate)
		if err != nil {
			s.markUnread(rec, d, err)
			continue
		}
		want := make(map[string]bool, len(ks))
		for _, k := range ks {
			want[k] = true
		}
		seen := make(map[string]bool, len(ks))
		for _, kv := range got {
			if !want[kv.Key] || kv.Value == nil {
				continue // not asked for: a scoped resync leaves it alone
			}
			seen[kv.Key] = true
			s.setRetrieved(d, kv)
		}
		for _, k := range ks {
			a := s.actual[k]
			if seen[k] || a == nil || a.d != d || a.implicit {
				continue
			}
			missing = s.unsetUnreported(k, a, missing)
		}
		for k := range seen {
			s.linkDerivedOf(k)
		}
	}
	s.announce(missing)
}

// retrieveKeys reads the values of keys (all d's) with d.RetrieveKeys, or,
// without it, with d.Retrieve, which returns other keys too.
func (s *Scheduler) retrieveKeys(d *regDescriptor, keys []string, correlate []KVWithMetadata) (got []KVWithMetadata, err error) {
	op := "Retrieve"
	if d.RetrieveKeys != nil {
		op = "RetrieveKeys"
	}
	defer s.calling(d, op, keys[0])()
	err = guard(func() (err error) {
		if d.RetrieveKeys != nil {
			got, err = d.RetrieveKeys(keys, correlate)
		} else {
			got, err = d.Retrieve(correlate)
		}
		return err
	})
	return got, err
}
