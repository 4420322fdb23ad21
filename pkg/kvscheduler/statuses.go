package kvscheduler

import "slices"

// publishTarget remembers the final target of a convergence; the statuses
// are derived from it when the transaction finishes.
func (s *Scheduler) publishTarget(t *target) { s.lastTgt = t }

// publishStatuses recomputes the status of every known key and notifies
// watchers of the changed ones. It returns the statuses changed since the
// previous call, for the history to rebuild past graphs from.
func (s *Scheduler) publishStatuses() []statusChange {
	t := s.lastTgt
	if t == nil {
		return nil
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
	changes := s.diffRecorded(next)
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
	return changes
}

// diffRecorded lists the statuses that differ between next and the
// statuses published with the previous record, and makes next the new
// reference. It compares against the recorded statuses rather than
// s.statuses because a refresh may have published intermediate statuses in
// between, which no record describes. Only pointers are kept: published
// statuses are never modified.
func (s *Scheduler) diffRecorded(next map[string]*ValueStatus) []statusChange {
	prev := s.recStatuses
	s.recStatuses = next
	if s.opts.HistoryMaxCount < 0 {
		return nil
	}
	var changes []statusChange
	if len(prev) == 0 {
		// Everything changes (typically the first transaction): one
		// allocation instead of growing.
		changes = make([]statusChange, 0, len(next))
	}
	for k, st := range next {
		if old := prev[k]; old == nil || !old.sameRecorded(st) {
			changes = append(changes, statusChange{key: k, before: old, after: st})
		}
	}
	for k, old := range prev {
		if _, ok := next[k]; !ok {
			changes = append(changes, statusChange{key: k, before: old})
		}
	}
	// Published statuses (and their dependencies) are allocated in chunks
	// shared by all keys, so one kept pointer keeps a whole chunk alive.
	// That is fine when a large part of the keys changed; for the typical
	// small transaction on a large graph, the few changed statuses are
	// copied instead, so that the history does not hold a full graph per
	// record.
	if len(changes)*4 < len(next) {
		compactChanges(changes)
	}
	return changes
}

// compactChanges replaces the statuses of changes by copies held in arrays
// of their own, detached from the published chunks.
func compactChanges(changes []statusChange) {
	nst, ndeps := 0, 0
	for _, c := range changes {
		for _, st := range [2]*ValueStatus{c.before, c.after} {
			if st != nil {
				nst++
				ndeps += len(st.Dependencies)
			}
		}
	}
	// Sized up front: the pointers handed out must stay valid.
	sts := make([]ValueStatus, 0, nst)
	deps := make([]DependencyStatus, 0, ndeps)
	keys := make([]string, 0, ndeps)
	detach := func(st *ValueStatus) *ValueStatus {
		if st == nil {
			return nil
		}
		c := *st
		if len(c.Dependencies) > 0 {
			from := len(deps)
			for _, d := range c.Dependencies {
				// The key of an exact-key dependency is in a shared array
				// too; the keys of any-of dependencies are allocated apart.
				if d.Key != "" && len(d.Keys) == 1 {
					keys = append(keys, d.Keys[0])
					d.Keys = keys[len(keys)-1 : len(keys) : len(keys)]
				}
				deps = append(deps, d)
			}
			c.Dependencies = deps[from:len(deps):len(deps)]
		}
		sts = append(sts, c)
		return &sts[len(sts)-1]
	}
	for i := range changes {
		changes[i].before = detach(changes[i].before)
		changes[i].after = detach(changes[i].after)
	}
}

// sameRecorded is a cheaper equal for the history: it runs for every key in
// every transaction, so it avoids formatting.
func (s *ValueStatus) sameRecorded(o *ValueStatus) bool {
	if s.Key != o.Key || s.State != o.State || s.LastOp != o.LastOp || s.Descriptor != o.Descriptor ||
		s.Derived != o.Derived || s.BaseKey != o.BaseKey ||
		!slices.Equal(s.UnmetDependencies, o.UnmetDependencies) || !slices.Equal(s.InvalidFields, o.InvalidFields) ||
		len(s.Dependencies) != len(o.Dependencies) {
		return false
	}
	// Errors are compared by text: comparing interfaces panics when the
	// dynamic type is not comparable.
	if (s.Error == nil) != (o.Error == nil) || s.Error != nil && s.Error.Error() != o.Error.Error() {
		return false
	}
	for i, d := range s.Dependencies {
		e := o.Dependencies[i]
		if d.Label != e.Label || d.Key != e.Key || d.Met != e.Met || !slices.Equal(d.Keys, e.Keys) {
			return false
		}
	}
	return true
}

func failedState(f *failure) ValueState {
	if f.retrying {
		return Retrying
	}
	return Failed
}
