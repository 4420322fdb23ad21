package kvscheduler

import "slices"

// Members of a cycle ordered after a member that never came: a value
// created as a member of a cycle counted on the members its ordering-only
// dependencies name being created right after it. One of them that could
// not be created after all (INVALID for a derived-key clash found only
// once it was ready, or its create failed) leaves it created before what
// it is ordered after, which an OrderingOnly dependent never is: it goes
// back to PENDING, as a member left without a member it Requires does
// (docs/kvscheduler.md, cycles; TestAdv24CycleMemberLeftWithoutAnInvalidMemberGoesBackToPending).

// countOnMembers notes the ordering-only dependencies of n, created just
// now as a member of a cycle, that no existing value meets: the members
// it counts on (see lacksMember).
func (w *walker) countOnMembers(n *node) {
	for _, dep := range n.deps {
		if dep.Kind != OrderingOnly || w.depMet(n, dep, nil) {
			continue
		}
		if w.countedOn == nil {
			w.countedOn = map[*node][]Dependency{}
		}
		w.countedOn[n] = append(w.countedOn[n], dep)
	}
}

// lacksMember tells whether n, a member settleCycles checks, is still
// without a member it counted on and no provider of that dependency came
// in this walk. Asked once the walk is done only: during it, a member to
// come may still be created (members taken down and created again there
// looped, seed 54039). A provider that came and went on its own (created,
// then deleted by the walk) leaves n as it leaves any value ordered after
// it: n stays (the OrderingOnly row of the dependency-kind table). One the
// walk only deleted never came: it leaves n without any provider, created
// before what it is ordered after
// (TestAdv28CycleMemberIsNotKeptByAProviderThatOnlyWent).
func (w *walker) lacksMember(n *node) bool {
	for _, dep := range w.settling[n] {
		if w.depMet(n, dep, nil) {
			continue
		}
		came := false
		w.g.providers(n, dep, func(p *node) bool {
			came = w.touchedHere(p) && !w.failedHere(p) && w.createdHere(p.key)
			return !came
		})
		if !came {
			return true
		}
	}
	return false
}

// createdHere tells whether the walk's record holds a create of key that
// went through: the value came in this walk, whatever became of it then.
// Asked only of the providers of a member settleCycles checks (rare), so
// the record is searched rather than kept in a set on every create.
func (w *walker) createdHere(key string) bool {
	for _, ro := range slices.Backward(w.rec.Executed) {
		if ro.Key == key && ro.Operation == OpCreate && !ro.NOOP && ro.Err == nil {
			return true
		}
	}
	return false
}
