package kvscheduler

// publishTarget remembers the final target of a convergence; the statuses
// are derived from it when the transaction finishes.
func (s *Scheduler) publishTarget(t *target) { s.lastTgt = t }

// publishStatuses recomputes the status of every known key and notifies
// watchers of the changed ones.
func (s *Scheduler) publishStatuses() {
	t := s.lastTgt
	if t == nil {
		return
	}
	size := len(t.nodes) + len(t.notReady) + len(s.actual)/8
	next := make(map[string]*ValueStatus, size)
	// The statuses are stored in chunks: a ValueStatus is too large for a
	// map to hold inline, and one allocation per status counts. They are
	// retained once published, so the first chunk has no slack; values
	// only in the actual state (rare) get further chunks.
	slab := make([]ValueStatus, 0, len(t.nodes)+len(t.notReady))
	put := func(k string, st ValueStatus) {
		if len(slab) == cap(slab) {
			slab = make([]ValueStatus, 0, max(64, len(s.actual)/16))
		}
		slab = append(slab, st)
		next[k] = &slab[len(slab)-1]
	}
	deps := depSlab{}
	for _, n := range t.nodes {
		deps.chunk += n.declared
	}
	for k, n := range t.nodes {
		st := ValueStatus{Key: k, Derived: n.base != "", BaseKey: n.base, LastOp: s.lastOp[k], Dependencies: t.depStatusesIn(&deps, n)}
		if n.d != nil {
			st.Descriptor = n.d.Name
		}
		switch f := s.failed[k]; {
		case f != nil && f.blocked:
			st.State, st.LastOp, st.Error = failedState(f), f.op, f.err
		case s.actual[k] == nil:
			st.State = Pending
		case n.origin == FromSB:
			st.State = Obtained
		default:
			st.State = Configured
		}
		put(k, st)
	}
	for k, st := range t.notReady {
		if f := s.failed[k]; f != nil && f.blocked {
			st.State, st.LastOp, st.Error = failedState(f), f.op, f.err
		} else if st.LastOp == OpNone {
			st.LastOp = s.lastOp[k]
		}
		put(k, st)
	}
	for k, a := range s.actual {
		if _, ok := next[k]; ok {
			continue
		}
		st := ValueStatus{Key: k, State: Discovered, LastOp: s.lastOp[k], Derived: a.base != "", BaseKey: a.base}
		if f := s.failed[k]; f != nil && f.blocked {
			st.State, st.LastOp, st.Error = failedState(f), f.op, f.err
		}
		put(k, st)
	}
	for k := range s.failed {
		if _, ok := next[k]; !ok {
			delete(s.failed, k)
		}
	}
	views := s.snapshotViews(t, next)
	s.smu.Lock()
	defer s.smu.Unlock()
	s.views = views
	// Only watchers need the list of changes.
	watched := len(s.watches) > 0
	var changed []ValueStatus
	if watched {
		for k, st := range next {
			if old, ok := s.statuses[k]; !ok || !old.equal(*st) {
				changed = append(changed, *st)
			}
		}
	}
	for k, old := range s.statuses {
		if _, ok := next[k]; !ok {
			if watched {
				changed = append(changed, ValueStatus{Key: k, State: Removed, LastOp: s.lastOp[k],
					Descriptor: old.Descriptor, Derived: old.Derived, BaseKey: old.BaseKey})
			}
			delete(s.lastOp, k)
		}
	}
	s.statuses = next
	for w := range s.watches {
		for _, st := range changed {
			w.push(st)
		}
	}
}

func failedState(f *failure) ValueState {
	if f.retrying {
		return Retrying
	}
	return Failed
}
