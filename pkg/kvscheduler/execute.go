package kvscheduler

import "fmt"

// converge plans and executes until the actual state matches the target
// (values whose operations failed are left as they are). With revert, the
// first failure undoes the executed operations and stops. It returns the
// failed operations.
func (s *Scheduler) converge(rec *TxnRecord, revert bool) []KeyError {
	var failed []KeyError
	// Every failing pass blocks at least one more key, so the number of
	// passes is bounded; the limit only guards against buggy descriptors.
	limit := len(s.desired) + len(s.actual) + 2
	for pass := 0; ; pass++ {
		t := s.computeTarget()
		ops := s.plan(t)
		if pass == 0 && ops != nil {
			if rec.Planned == nil {
				rec.Planned = recordOps(ops)
			} else {
				rec.Planned = append(rec.Planned, recordOps(ops)...)
			}
			if l := s.opts.Logger; l != nil && l.IsLevelEnabled(s.opts.TxnLogLevel) {
				l.Log(s.opts.TxnLogLevel, planStringer{rec})
			}
		}
		if len(ops) == 0 || pass >= limit {
			s.publishTarget(t)
			return failed
		}
		done, applied, fails := s.execute(rec, ops, t, revert)
		failed = append(failed, fails...)
		if len(fails) > 0 && revert {
			s.revert(rec, done)
			return failed
		}
		if applied == len(ops) {
			// Everything planned was applied: the actual state is the
			// target, no need to simulate again.
			s.publishTarget(t)
			return failed
		}
	}
}

func recordOps(ops []op) []RecordedOp {
	out := make([]RecordedOp, len(ops))
	for i, o := range ops {
		out[i] = RecordedOp{Operation: o.kind, Key: o.key, PrevValue: o.prev, NewValue: o.new,
			Recreate: o.recreate, Derived: o.base != ""}
	}
	return out
}

// execute runs the plan; done (kept only for a revert) lists the applied
// operations, applied counts them.
func (s *Scheduler) execute(rec *TxnRecord, ops []op, t *target, revert bool) (done []op, applied int, failed []KeyError) {
	bad := map[string]bool{}
	if revert {
		done = make([]op, 0, len(ops))
	}
	// A first large transaction would grow these maps step by step.
	if len(s.lastOp) == 0 && len(ops) > 64 {
		s.lastOp = make(map[string]Operation, len(ops))
	}
	if len(s.actual) == 0 && len(ops) > 64 {
		s.actual = make(map[string]*actualVal, len(ops))
	}
	if cap(rec.Executed)-len(rec.Executed) < len(ops) {
		rec.Executed = append(make([]RecordedOp, 0, len(rec.Executed)+len(ops)), rec.Executed...)
	}
	for _, o := range ops {
		if o.kind == OpCreate && (bad[o.key] || !s.depsMet(t, o.key, bad)) {
			bad[o.key] = true
			continue
		}
		ro := RecordedOp{Operation: o.kind, Key: o.key, PrevValue: o.prev, NewValue: o.new,
			Recreate: o.recreate, Derived: o.base != "", PrevState: s.currentState(o.key)}
		unread := s.unreadFor(o)
		var err error
		if unread != nil {
			err = fmt.Errorf("kvscheduler: not applied: %w", unread)
		} else {
			err = s.apply(o)
		}
		if err != nil {
			ro.Err = err
			ro.NewState = Failed
			rec.Executed = append(rec.Executed, ro)
			rec.Errors = append(rec.Errors, KeyError{Key: o.key, Operation: o.kind, Err: err})
			failed = append(failed, KeyError{Key: o.key, Operation: o.kind, Err: err})
			bad[o.key] = true
			if unread == nil {
				s.refreshKey(o)
			}
			if revert {
				return done, applied, failed
			}
			s.markFailed(o, err, rec.SeqNum)
			continue
		}
		delete(s.failed, o.key)
		s.lastOp[o.key] = o.kind
		ro.NewState = Configured
		if o.kind == OpDelete {
			ro.NewState = Removed
			if o.recreate {
				ro.NewState = Pending
			}
		}
		rec.Executed = append(rec.Executed, ro)
		applied++
		if revert {
			done = append(done, o)
		}
	}
	return done, applied, failed
}

// depsMet tells whether a value can be created now: its dependencies exist
// or are still expected from this pass (which lets a cycle be created
// together).
func (s *Scheduler) depsMet(t *target, k string, bad map[string]bool) bool {
	n := t.nodes[k]
	if n == nil {
		return false
	}
	ok := func(p string) bool {
		if s.actual[p] != nil {
			return true
		}
		pn := t.nodes[p]
		for i := 0; pn != nil && i < 64; i++ {
			if bad[pn.key] {
				return false
			}
			if pn.base == "" || !pn.implicitNode() {
				return true
			}
			pn = t.nodes[pn.base]
		}
		return pn != nil
	}
	for _, dep := range n.deps {
		if dep.Key != "" {
			if !ok(dep.Key) {
				return false
			}
			continue
		}
		met := false
		for p := range s.actual {
			if p != k && dep.matches(p) {
				met = true
				break
			}
		}
		for p := range t.nodes {
			if met {
				break
			}
			met = p != k && dep.matches(p) && ok(p)
		}
		if !met {
			return false
		}
	}
	return true
}

// unreadFor returns the failed Retrieve that forbids o in this transaction:
// that of o's descriptor or of its base's.
func (s *Scheduler) unreadFor(o op) *RetrieveError {
	if len(s.unread) == 0 {
		return nil
	}
	if re := s.unread[o.d.Name]; re != nil {
		return re
	}
	if o.base == "" {
		return nil
	}
	if bd, _ := s.reg.owner(o.base); bd != nil {
		return s.unread[bd.Name]
	}
	return nil
}

func (s *Scheduler) currentState(k string) ValueState {
	s.smu.RLock()
	defer s.smu.RUnlock()
	if st, ok := s.statuses[k]; ok {
		return st.State
	}
	return NonExistent
}

// apply calls the descriptor and, on success, updates the actual state.
func (s *Scheduler) apply(o op) error {
	d := o.d
	switch o.kind {
	case OpCreate:
		var md any
		returned := s.calling(d, "Create", o.key)
		err := guard(func() (err error) { md, err = d.Create(o.key, o.new); return err })
		returned()
		if err != nil {
			return err
		}
		s.setActual(o.key, &actualVal{value: o.new, metadata: md, origin: FromNB, base: o.base, d: d})
	case OpDelete:
		a := s.actual[o.key]
		if a == nil {
			return nil
		}
		if d.Delete == nil {
			return fmt.Errorf("kvscheduler: descriptor %q cannot delete values", d.Name)
		}
		returned := s.calling(d, "Delete", o.key)
		err := guard(func() error { return d.Delete(o.key, a.value, a.metadata) })
		returned()
		if err != nil {
			return err
		}
		s.setActual(o.key, nil)
	case OpUpdate:
		a := s.actual[o.key]
		var md any
		returned := s.calling(d, "Update", o.key)
		err := guard(func() (err error) { md, err = d.Update(o.key, a.value, o.new, a.metadata); return err })
		returned()
		if err != nil {
			return err
		}
		s.setActual(o.key, &actualVal{value: o.new, metadata: md, origin: FromNB, base: a.base, d: d})
	}
	return nil
}

// setActual records a value as existing (a != nil) or gone, keeping the
// metadata map and the implicit derived values in step.
func (s *Scheduler) setActual(k string, a *actualVal) {
	prev := s.actual[k]
	if a == nil {
		if prev == nil {
			return
		}
		delete(s.actual, k)
		if prev.d != nil && prev.d.WithMetadata {
			prev.d.md.put(prev.d.label(k), nil)
		}
	} else {
		s.actual[k] = a
		if a.d != nil && a.d.WithMetadata {
			a.d.md.put(a.d.label(k), a.metadata)
		}
	}
	s.relink(k)
}

// relink re-derives the implicit values of k: properties (derived values
// without a descriptor) and values derived from southbound-owned ones.
func (s *Scheduler) relink(k string) {
	for _, c := range s.implicit[k] {
		if a := s.actual[c]; a != nil && a.implicit && a.base == k {
			delete(s.actual, c)
			s.relink(c)
		}
	}
	delete(s.implicit, k)
	a := s.actual[k]
	if a == nil || a.d == nil || a.d.DerivedValues == nil {
		return
	}
	derived, err := callDerived(a.d, k, a.value)
	if err != nil {
		return
	}
	for _, kv := range derived {
		if kv.Key == "" || kv.Value == nil {
			continue
		}
		dd, _ := s.reg.owner(kv.Key)
		if dd != nil && a.origin != FromSB {
			continue
		}
		if ex := s.actual[kv.Key]; ex != nil && !ex.implicit {
			continue
		}
		s.actual[kv.Key] = &actualVal{value: kv.Value, origin: a.origin, base: k, d: dd, implicit: true}
		s.implicit[k] = append(s.implicit[k], kv.Key)
		s.relink(kv.Key)
	}
}

func (s *Scheduler) markFailed(o op, err error, seq uint64) {
	f := s.failed[o.key]
	if f == nil {
		f = &failure{}
		s.failed[o.key] = f
	}
	// gen 0 disowns a retry armed for an earlier failure: the new failure
	// gets a retry of its own (or none, once exhausted).
	f.op, f.err, f.seq, f.blocked, f.retrying, f.exhausted, f.gen = o.kind, err, seq, true, false, false, 0
	f.attempts++
	// A failed pure delete has no value; a failed re-create keeps the value
	// it was heading to, so that it stays blocked until changed.
	f.value = o.new
	if o.kind == OpDelete && !o.recreate {
		f.value = nil
	}
	f.retryOpts, f.d = o.retry, o.d
}

// revert undoes the executed operations in reverse order.
func (s *Scheduler) revert(rec *TxnRecord, done []op) {
	for i := len(done) - 1; i >= 0; i-- {
		o := done[i]
		inv := op{key: o.key, d: o.d, base: o.base}
		switch o.kind {
		case OpCreate:
			inv.kind, inv.prev = OpDelete, o.new
		case OpDelete:
			inv.kind, inv.new = OpCreate, o.prev
		case OpUpdate:
			inv.kind, inv.prev, inv.new = OpUpdate, o.new, o.prev
		}
		err := s.apply(inv)
		rec.Executed = append(rec.Executed, RecordedOp{Operation: inv.kind, Key: inv.key, PrevValue: inv.prev,
			NewValue: inv.new, Revert: true, Derived: inv.base != "", Err: err})
		if err != nil {
			rec.Errors = append(rec.Errors, KeyError{Key: inv.key, Operation: inv.kind, Err: err})
			s.refreshKey(inv)
		} else {
			s.lastOp[inv.key] = inv.kind
		}
	}
}
