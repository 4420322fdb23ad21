package kvscheduler

// DependencyKind says what a dependency means once its dependent exists.
// Both kinds gate the creation of the dependent: it waits (PENDING) until
// the dependency is met.
type DependencyKind uint8

const (
	// Requires (the zero value) keeps the dependent only while the
	// dependency is met: when the value it needs goes, the dependent is
	// deleted first and waits (PENDING) for it to come back.
	Requires DependencyKind = iota
	// OrderingOnly orders creation and deletion only: the dependent is
	// created after the value it names, and when both are deleted in one
	// transaction it is deleted before it; when the value it names goes
	// on its own, the dependent stays (and is updated in place) as it is.
	OrderingOnly
)

// String names the kind as statuses and documentation do.
func (k DependencyKind) String() string {
	if k == OrderingOnly {
		return "ordering-only"
	}
	return "requires"
}

// hasOrdering tells whether any of deps is ordering only.
func hasOrdering(deps []Dependency) bool {
	for _, d := range deps {
		if d.Kind == OrderingOnly {
			return true
		}
	}
	return false
}

// staysByOrdering tells whether n, which has an ordering-only dependency,
// may exist although one of those is unmet: it is valid, its base exists
// and every dependency that Requires is met. Used where the scheduler
// judges whether a value that exists stays (or is updated in place, or is
// in sync); a value that does not exist yet still waits for every
// dependency (see ready).
func (w *walker) staysByOrdering(n *node) bool {
	if !hasOrdering(n.deps) || n.depErr() != nil || !w.baseAvail(n, nil) {
		return false
	}
	for _, dep := range n.deps {
		if dep.Kind == Requires && !w.depMet(n, dep, nil) {
			return false
		}
	}
	return true
}
