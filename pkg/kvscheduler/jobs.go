package kvscheduler

import "slices"

// The jobs other than transactions: a descriptor's registration, a
// southbound notification, a retry. Each is a walk like a transaction's,
// of the values it names (see process).

func (s *Scheduler) register(d *Descriptor) (*TxnRecord, error) {
	if err := s.reg.check(d, s.g); err != nil {
		return nil, err
	}
	rd := s.reg.add(d)
	if d.WithMetadata {
		s.smu.Lock()
		s.mdMaps[d.Name] = rd.md
		s.smu.Unlock()
	}
	// Values whose owner changes (typically UNIMPLEMENTED values the new
	// descriptor claims) are applied again.
	var redo []string
	for k, n := range s.g.nodes {
		nd, err := s.reg.owner(k)
		if nd == n.d && (err == nil) == (n.dErr() == nil) {
			continue
		}
		n.d = nd
		n.setDErr(err)
		// Dependencies and derived values come from the descriptor: those
		// cached for the value are computed again.
		n.depsFor, n.derivedFor, n.derivedKVs = nil, nil, nil
		n.derivedWant, n.derivedSB = false, false
		if n.base == "" && n.last != nil && !n.exists() {
			redo = append(redo, k)
		}
	}
	if len(redo) == 0 {
		return nil, nil
	}
	slices.Sort(redo)
	rec := s.newRecord(DescriptorRegistration)
	rec.Description = "registered descriptor " + d.Name
	w := s.newWalker(rec, nil)
	// The values applied again are decided on what the southbound holds:
	// what a failed read-back left unknown is read first, as by every job
	// that decides something.
	s.readUnknown(w)
	w.drain("the values read back")
	for _, k := range redo {
		n := s.g.nodes[k]
		w.setApplied(k)
		w.run(frame{kind: fApply, key: k, value: n.last.value, last: n.last, origin: n.origin})
	}
	s.finish(w)
	return rec, nil
}

// notify applies a change the southbound made on its own. Notifications
// for values the northbound manages are ignored, as in the reference: the
// scheduler's view of those comes from its own operations and resyncs. A
// key no descriptor claims is not managed by the northbound even when
// requested (nothing applies the request): the southbound says what it
// holds.
func (s *Scheduler) notify(kv KVWithMetadata) (*TxnRecord, error) {
	n := s.g.nodes[kv.Key]
	unclaimed := n != nil && n.d == nil && n.base == "" && n.dErr() == nil && n.origin == FromNB && n.last != nil
	if n != nil && n.origin == FromNB && (n.want != nil || n.last != nil || n.exists()) && !unclaimed {
		return nil, nil
	}
	rec := s.newRecord(SBNotification)
	rec.Values = []KeyValuePair{{Key: kv.Key, Value: kv.Value}}
	w := s.newWalker(rec, nil)
	s.readUnknown(w)
	w.drain("the values read back")
	w.setApplied(kv.Key)
	if unclaimed {
		// Requested by the northbound, which cannot apply it: the
		// southbound says what is held (see unclaimed.go).
		w.notifiedUnclaimed(n, kv.Value)
	} else {
		w.run(frame{kind: fApply, key: kv.Key, value: kv.Value, origin: FromSB,
			last: &update{value: kv.Value, seq: rec.SeqNum}})
	}
	if n := s.g.nodes[kv.Key]; n != nil && n.exists() {
		s.setMetadata(n, kv.Metadata)
	}
	w.applyReleased()
	s.finish(w)
	return rec, nil
}

// retryFailed re-applies the requests of the bases of values whose retry
// is due; values changed since (or retried by a resync) are left out.
func (s *Scheduler) retryFailed(j *job) (*TxnRecord, error) {
	var failed []*node
	for _, k := range j.keys {
		if n := s.g.nodes[k]; n != nil && n.retryGen() == j.gen && n.blocked() {
			failed = append(failed, n)
		}
	}
	if len(failed) == 0 {
		return nil, nil // nothing left to retry: no transaction (nor sequence number)
	}
	rec := s.newRecord(RetryFailedOps)
	w := s.newWalker(rec, nil)
	w.kind.retry, w.kind.unblock = true, map[string]bool{}
	s.readUnknown(w)
	w.drain("the values read back")
	var bases []string
	for _, n := range failed {
		rec.RetryOf = appendUnique(rec.RetryOf, txnNumber(n.failSeq()))
		b := s.g.baseKey(n)
		w.kind.unblock[n.key], w.kind.unblock[b] = true, true
		if m := w.retryOf[b]; n.attempt() > m.attempt {
			if w.retryOf == nil {
				w.retryOf = map[string]retryMark{}
			}
			w.retryOf[b] = retryMark{attempt: n.attempt(), seq: n.failSeq()}
		}
		if bn := s.g.nodes[b]; bn != nil && bn.last != nil && !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
	}
	slices.Sort(bases)
	// As in a transaction, a base not re-applied yet is neither created
	// with, nor counted on in a cycle for, the value it failed with: its
	// request comes further on.
	for _, b := range bases {
		w.setLater(b)
	}
	for _, b := range bases {
		n := s.g.nodes[b]
		w.applyNow(b)
		rec.Values = append(rec.Values, KeyValuePair{Key: b, Value: n.last.value}) // as in the reference
		w.run(frame{kind: fApply, key: b, value: n.last.value, last: n.last, origin: n.origin})
	}
	w.resume()
	// A derived value its base no longer reaches (left over by a delete
	// that failed when the base changed or went, or whose create failed
	// before its base went PENDING or stopped deriving it) is retried on
	// its own: deleted, if its base was applied again above (the base
	// applies what it still derives).
	for _, n := range failed {
		if s.g.nodes[n.key] == n && n.blocked() && n.retryGen() == j.gen {
			v := n.want
			if n.base != "" && slices.Contains(bases, s.g.baseKey(n)) {
				v = nil
			}
			w.setApplied(n.key)
			rec.Values = append(rec.Values, KeyValuePair{Key: n.key, Value: v})
			w.run(frame{kind: fApply, key: n.key, value: v, base: n.base, origin: n.origin})
		}
	}
	w.applyReleased()
	s.finish(w)
	return rec, nil
}
