package kvscheduler

import "slices"

// Statuses, values and history are published incrementally: a transaction
// marks the keys it touches (and the dependents whose dependencies it
// met or unmet) dirty, and only those are recomputed, compared and
// replaced; a key whose status cannot have changed (an equal object
// read back, new metadata, a value in sync) is marked for its view only.
// Published statuses are never modified, only replaced, so readers
// holding one are never affected; views are changed in place under smu,
// and DumpValues copies what it returns out of them under it.

// pubEntry is what is published of a key, under the scheduler's smu: its
// status, replaced (a published status is never modified: readers and
// the history keep it), and its view, changed in place. Each node has its
// own entry (node.pub), so that publishing a key costs no allocation, and
// publishing a known key again no map operation either.
type pubEntry struct {
	st   *ValueStatus
	view pubValue
	// rec is the status as the history recorded it last (st, unless a
	// refresh published an intermediate one since): the history's current
	// statuses, from which past graphs are rebuilt (see snapshot). It
	// changes only while the history's lock is held too.
	rec *ValueStatus
}

// published returns n's published status (nil if none). It is replaced
// only by the transaction's goroutine (under smu), which reads it here.
func (n *node) published() *ValueStatus {
	return n.pub.st
}

// setPublished publishes st as n's status, under smu: a new entry (with
// n's view) if n has none, which it tells, else st replaces the entry's.
func (s *Scheduler) setPublished(n *node, st *ValueStatus) bool {
	if n.pub.st == nil {
		n.pub = pubEntry{st: st, view: value(n)}
		s.statuses[n.key] = &n.pub
		return true
	}
	n.pub.st = st
	return false
}

// pubValue is what DumpValues shows of a key.
type pubValue struct {
	nb       any // the desired value, if the northbound requested one
	sb       any // the value in the southbound, if any
	metadata any
	origin   Origin
	desc     string
	cached   any // as applied, else as waiting
}

// publish recomputes the statuses and values of the dirty keys, drops the
// nodes nothing refers to any more, notifies watchers of the changed
// statuses and returns the statuses changed since the last record, for the
// history (it compares with the recorded statuses rather than the
// published ones because a refresh may have published intermediate
// statuses in between, which no record describes).
func (s *Scheduler) publish() []statusChange {
	// Made here and only lent to the two steps, so that a small list
	// (one value's change) stays on the stack.
	entries := make([]pubUpdate, 0, len(s.dirtyNodes))
	entries, nChanges := s.dirtyStatuses(entries)
	return s.publishStatuses(entries, nChanges)
}

// pubUpdate is the status to publish for a node (nil: the node is dropped).
type pubUpdate struct {
	n  *node
	st *ValueStatus
}

// dirtyStatuses appends to entries the statuses of the dirty nodes,
// drops the nodes nothing refers to any more, and counts the changes the
// history records.
func (s *Scheduler) dirtyStatuses(entries []pubUpdate) (_ []pubUpdate, nChanges int) {
	w := &walker{s: s, g: s.g, seq: s.seq}
	sc := &s.scratch
	add := func(n *node, st *ValueStatus) {
		if recordedChange(n.pub.rec, st) {
			nChanges++ // to size the history's list once rather than grow it
		}
		entries = append(entries, pubUpdate{n: n, st: st})
	}
	for _, n := range s.dirtyNodes {
		full := n.dirty
		n.dirty, n.viewDirty = false, false
		n.tidy()
		if n.want == nil && !n.exists() && !n.avail && !n.blocked() && !n.holdsLeftover() {
			s.unwait(n)
			s.unlistGone(n)
			s.g.remove(n)
			add(n, nil)
			continue
		}
		if pub := n.published(); !full && pub != nil {
			// Only its view changed.
			add(n, pub)
			continue
		}
		// Built in scratch buffers and compared with the published status
		// first: an unchanged status (most of those a resync touches)
		// stays as it is, and costs no allocation.
		st := w.statusInto(n, sc)
		if pub := n.published(); pub != nil && pub.sameRecorded(st) {
			st = pub
		} else {
			st = sc.own()
		}
		add(n, st)
	}
	s.dirtyNodes = emptied(s.dirtyNodes)
	return entries, nChanges
}

// publishStatuses publishes entries, notifies the watchers of the changed
// statuses and returns the changes the history records.
func (s *Scheduler) publishStatuses(entries []pubUpdate, nChanges int) []statusChange {
	recorded := s.opts.HistoryMaxCount >= 0
	var changes []statusChange
	if recorded {
		changes = make([]statusChange, 0, nChanges)
	}
	s.smu.Lock()
	watched := len(s.watches) > 0
	var changed []ValueStatus
	for i := range entries {
		e := &entries[i]
		key := e.n.key
		old := e.n.published() // s.statuses[key]
		before := e.n.pub.rec
		switch {
		case e.st == nil:
			if old != nil {
				delete(s.statuses, key)
				e.n.pub = pubEntry{}
				if watched {
					changed = append(changed, ValueStatus{Key: key, State: Removed, LastOp: old.LastOp,
						Descriptor: old.Descriptor, Derived: old.Derived, BaseKey: old.BaseKey})
				}
			}
		default:
			if !s.setPublished(e.n, e.st) {
				if v := value(e.n); !e.n.pub.view.same(&v) {
					e.n.pub.view = v
				}
			}
			if e.st != old && watched { // else unchanged: the published one stays
				changed = append(changed, *e.st)
			}
		}
		if recorded && recordedChange(before, e.st) {
			changes = append(changes, statusChange{key: key, before: before, after: e.st})
			if e.st != nil {
				e.n.pub.rec = e.st
			}
		}
	}
	for w := range s.watches {
		for _, st := range changed {
			w.push(st)
		}
	}
	s.smu.Unlock()
	return changes
}

// recordedChange tells whether st, to be published, differs from the
// status the history recorded last (before).
func recordedChange(before, st *ValueStatus) bool {
	return before != st && (before == nil || st == nil || !before.sameRecorded(st))
}

// emptied returns the list of dirty nodes empty. The nodes are cleared
// from it so that it does not keep removed ones alive, and a large list
// is dropped: after a large transaction, the room would stay taken.
func emptied(ns []*node) []*node {
	if cap(ns) >= 4096 {
		return nil
	}
	clear(ns)
	return ns[:0]
}

// announce publishes intermediate statuses (MISSING values found by a
// refresh) before the transaction repairs them.
func (s *Scheduler) announce(keys []string) {
	if len(keys) == 0 {
		return
	}
	w := &walker{s: s, g: s.g, seq: s.seq}
	s.smu.Lock()
	defer s.smu.Unlock()
	for _, k := range keys {
		n := s.g.nodes[k]
		if n == nil {
			continue
		}
		st := w.status(n)
		s.setPublished(n, st)
		for wt := range s.watches {
			wt.push(*st)
		}
	}
}

// statusScratch holds the buffers a status is built in: a ValueStatus and
// the backing arrays of its slices, reused from one value to the next.
// own copies the status out of them once it is to be published.
type statusScratch struct {
	st   ValueStatus
	deps []DependencyStatus
	strs []string
}

// oneDepStatus and smallStatus are a status with room for its
// dependencies and strings when they are few (most values have a
// dependency or two): one allocation for all of it, the smallest that
// fits.
type oneDepStatus struct {
	st   ValueStatus
	deps [1]DependencyStatus
	strs [1]string
}

type smallStatus struct {
	st   ValueStatus
	deps [2]DependencyStatus
	strs [3]string
}

// own returns a copy of the status built in sc that shares nothing with
// the buffers (nil slices stay nil): one allocation for the status, its
// dependencies and its strings when they are few, else one for the
// status, one for its dependencies and one for all its strings.
func (sc *statusScratch) own() *ValueStatus {
	total := len(sc.st.UnmetDependencies)
	for _, d := range sc.st.Dependencies {
		total += len(d.Keys)
	}
	var st *ValueStatus
	var strs []string
	switch {
	case total == 0 && sc.st.Dependencies == nil:
		st = new(ValueStatus)
		*st = sc.st
	case total <= 1 && len(sc.st.Dependencies) <= 1:
		box := new(oneDepStatus)
		st, strs = sc.copyInto(&box.st, box.deps[:]), box.strs[:0:total]
	case total <= 3 && len(sc.st.Dependencies) <= 2:
		box := new(smallStatus)
		st, strs = sc.copyInto(&box.st, box.deps[:]), box.strs[:0:total]
	default:
		st = new(ValueStatus)
		*st = sc.st
		if total > 0 {
			strs = make([]string, 0, total)
		}
		if sc.st.Dependencies != nil {
			st.Dependencies = slices.Clone(sc.st.Dependencies)
		}
	}
	take := func(src []string) []string {
		if src == nil {
			return nil
		}
		from := len(strs)
		strs = append(strs, src...)
		return strs[from:len(strs):len(strs)]
	}
	st.UnmetDependencies = take(st.UnmetDependencies)
	for i := range st.Dependencies {
		st.Dependencies[i].Keys = take(st.Dependencies[i].Keys)
	}
	return st
}

// copyInto copies the status built in sc to st, its dependencies into
// deps (room enough for them), and returns st; the strings are copied by
// own.
func (sc *statusScratch) copyInto(st *ValueStatus, deps []DependencyStatus) *ValueStatus {
	*st = sc.st
	if n := len(sc.st.Dependencies); sc.st.Dependencies != nil {
		st.Dependencies = deps[:n:n]
		copy(st.Dependencies, sc.st.Dependencies)
	}
	return st
}

// status builds the status of n.
func (w *walker) status(n *node) *ValueStatus {
	var sc statusScratch
	w.statusInto(n, &sc)
	return sc.own()
}

// statusInto builds the status of n in sc's buffers (see statusScratch).
func (w *walker) statusInto(n *node, sc *statusScratch) *ValueStatus {
	sc.deps, sc.strs = sc.deps[:0], sc.strs[:0]
	st := &sc.st
	*st = ValueStatus{Key: n.key, State: n.state, LastOp: n.lastOp, Error: n.err, InvalidFields: n.fields(),
		Derived: n.base != "", BaseKey: n.base}
	if n.origin == FromSB {
		// Obtained from the southbound: no operation of the northbound's,
		// as in the reference.
		st.LastOp = OpNone
	}
	if n.d != nil {
		st.Descriptor = n.d.Name
	}
	if n.blocked() {
		st.State = Failed
		if n.retryGen() != 0 {
			st.State = Retrying
		}
	}
	if st.State == Pending {
		st.UnmetDependencies = w.unmet(n, sc)
	}
	// Dependencies are known for values whose dependencies the scheduler
	// checks: not for values kept as they are (southbound-owned, blocked
	// after a failure) nor for values rejected before the check.
	if !n.implicit() && !n.blocked() && n.state != Invalid && n.state != Unimplemented && n.state != Discovered {
		st.Dependencies = w.depStatuses(n, sc)
	}
	return st
}

// same tells whether v shows the same objects as o (see identical).
func (v *pubValue) same(o *pubValue) bool {
	return v.origin == o.origin && v.desc == o.desc && identical(v.nb, o.nb) && identical(v.sb, o.sb) &&
		identical(v.metadata, o.metadata) && identical(v.cached, o.cached)
}

// value builds what DumpValues shows of n.
func value(n *node) pubValue {
	v := pubValue{sb: n.sb, metadata: n.metadata, origin: n.origin, cached: n.sb}
	if n.sb != nil && n.want != nil && n.state == Configured {
		// Applied: the request, which the southbound holds or holds an
		// equivalent of (the SB view shows which).
		v.cached = n.want
	}
	if n.d != nil {
		v.desc = n.d.Name
	}
	if n.base == "" && n.origin == FromNB && n.last != nil {
		v.nb = n.last.value
	}
	if v.cached == nil {
		v.cached = n.want
	}
	if v.origin == UnknownOrigin {
		v.origin = FromNB
	}
	return v
}

// sameRecorded is a cheaper equal for the history and the watchers: it
// runs for every changed key, so it avoids formatting.
func (s *ValueStatus) sameRecorded(o *ValueStatus) bool {
	if s.Key != o.Key || s.State != o.State || s.LastOp != o.LastOp || s.Descriptor != o.Descriptor ||
		s.Derived != o.Derived || s.BaseKey != o.BaseKey ||
		!slices.Equal(s.UnmetDependencies, o.UnmetDependencies) || !slices.Equal(s.InvalidFields, o.InvalidFields) ||
		len(s.Dependencies) != len(o.Dependencies) {
		return false
	}
	// Errors are compared by text: comparing interfaces panics when the
	// dynamic type is not comparable.
	if !sameError(s.Error, o.Error) {
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
