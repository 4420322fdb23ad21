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

// orderDeletes reorders the deletes at the head of vs (group 0, sorted by
// key), when one of them has an ordering-only dependency, so that a value
// is deleted after the values deleted with it that depend on it, of either
// kind: dependents go first, and so do the dependents of a value that
// Requires another one deleted with them (a readiness marker, say), which
// the cascade of a Requires dependency alone would leave in place. Without
// ordering-only dependencies the key order stands (a Requires dependent is
// taken down first by the delete of what it needs), unless a delete is of
// a value nothing wants (found in the southbound, after a restart say):
// the cascade does not take such a value down, so what it depends on would
// be refused its delete while it still exists. Values in a cycle keep
// their key order.
//
// The dependencies are those of the value being deleted, the one in the
// southbound (node.sbDeps, when it is not the wanted one), as well as the
// wanted value's: a value read back after a restart has no wanted value,
// and only its own record (kubedescriptor's annotations, say) says what it
// was ordered after.
func orderDeletes(vs []txnValue) {
	end := 0
	ordering := false
	for end < len(vs) && vs[end].group == 0 {
		if n := vs[end].n; n != nil && (hasOrdering(n.deps) || hasOrdering(n.sbDeps) || n.want == nil && len(n.sbDeps) > 0) {
			ordering = true
		}
		end++
	}
	if !ordering || end < 2 {
		return
	}
	dels := vs[:end]
	index := make(map[string]int, end)
	for i := range dels {
		index[dels[i].key] = i
	}
	// after[j]: the deletes that must run before dels[j] (its dependents).
	// A dependency on one key is looked up; only any-of dependencies scan.
	after := make([][]int, end)
	for i := range dels {
		m := dels[i].n
		if m == nil {
			continue
		}
		for _, dep := range deleteDeps(m) {
			if dep.Key != "" {
				if j, ok := index[dep.Key]; ok && j != i && dels[j].n != nil {
					after[j] = append(after[j], i)
				}
				continue
			}
			for j := range dels {
				if j != i && dels[j].n != nil && dep.matchesKey(dels[j].key) {
					after[j] = append(after[j], i)
				}
			}
		}
	}
	out := make([]txnValue, 0, end)
	state := make([]uint8, end) // 0 new, 1 visiting, 2 placed
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return // placed, or a cycle: left where key order puts it
		}
		state[i] = 1
		for _, j := range after[i] {
			visit(j)
		}
		state[i] = 2
		out = append(out, dels[i])
	}
	for i := range dels {
		visit(i)
	}
	copy(dels, out)
}

// deleteDeps returns the dependencies that order n's delete: its wanted
// value's and, when different, those of its value in the southbound (the
// one the delete takes away).
func deleteDeps(n *node) []Dependency {
	if len(n.sbDeps) == 0 {
		return n.deps
	}
	if len(n.deps) == 0 {
		return n.sbDeps
	}
	return append(n.deps[:len(n.deps):len(n.deps)], n.sbDeps...)
}
