package kvscheduler

// Dependents taken down early, into PENDING, by deleteDueDependents: the
// Requires cascade of a request further on surely takes them away after
// the value going, which they depend on (see deleteorder.go).

// takeDownEarly takes down (into PENDING) the dependents of a delete under
// way that deleteDueDependents found surely taken away later in the step.
// It starts their deletes before the requests found due are pushed, so
// that those requests run first: a dependent taken down early goes after
// a dependent of its own whose request is due as well
// (TestAdv28DependentTakenDownEarlyGoesAfterItsOwnDueDependent: b/1 =
// w|d/1,~a/*, taken down at a/3's delete, went before r/2 =
// v|~b/1,~a/3, whose delete request was pushed first). Its own delete
// finds such a request still to come and pushes it (see
// deleteDueDependents); its end waits for that delete (see
// dependentUnderWay).
func (w *walker) takeDownEarly(down []*node) {
	for _, b := range down {
		if b.avail && !b.deleting() {
			w.s.dirty(b)
			early := w.earlyDown
			w.earlyDown = b // see updateSpares
			w.delete(b, delPending, false)
			w.earlyDown = early
		}
	}
}

// updateCascades tells whether m, a dependent of n that stays while n
// goes (see cascadeSpares), has an update further on whose new value
// Requires what the Requires cascade of the step surely takes away (see
// recreateCascades): applied in its place, after n went, it takes m
// away then, so m is taken down now, before n, and its request finds it
// gone (TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade:
// a/2 = v|~a/1, updated to w|r/1 after b/2's delete, whose cascade takes
// a/1 and r/1, went after a/1). Applied early instead, it would find r/1
// still there and update m for nothing. Where the gap closes again before
// the update (a provider re-created), this costs a take-down and a create
// that were not needed, never a delete out of order.
func (w *walker) updateCascades(m, n *node) bool {
	if !m.avail || m.origin == FromSB || m.sbDeps != nil || !w.cascadeSpares(m, n, nil) {
		return false
	}
	v, ok := w.laterTxnValue(m.key)
	if !ok || v.value == nil || v.group == 1 || m.d == nil || m.d.Dependencies == nil {
		return false
	}
	deps, err := callDeps(m.d, m.key, v.value)
	if err != nil {
		return false
	}
	// n is not counted as asking (see depGap): what its own cascade takes
	// away is gone by the time m's request is judged (adv5 fuzz seed
	// 13249369: a/3 = v|r/2,~a/2, updated to v|r/1 while a/2's delete
	// under way takes r/1 down). seen as recreateCascades has it.
	seen := map[*node]bool{m: true}
	for _, dep := range deps {
		if dep.Kind == Requires && w.depGap(m, dep, seen, false) {
			return true
		}
	}
	return false
}
