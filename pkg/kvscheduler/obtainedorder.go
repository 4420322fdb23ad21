package kvscheduler

// The delete order for values the southbound owns (OBTAINED). Their
// dependencies are not indexed (the southbound removes what it needs
// itself, see neededByHeld), so no walk of the graph's dependents finds
// them. A request of the transaction takes such a value over; when it
// surely takes the southbound's value away (a delete, or an update whose
// new value cannot be created), the transaction deletes that value, and
// it goes before what it depends on, as any dependent does (adv5 fuzz
// seed 7586: a/2 = w|d/1, OBTAINED, was taken over by w|d/2, which
// nothing provides, and deleted into PENDING after d/1 went with its
// re-created base).

// obtainedDue pushes, to run before the end of n's delete (pushed
// already), the transaction's requests further on that take over a value
// the southbound owns, whose value in the southbound depends on n, and
// surely take that value away. Members of a cycle with n go together.
func (w *walker) obtainedDue(n *node) {
	for _, j := range w.obtainedRequests() {
		v := w.values[j]
		m := w.g.nodes[v.key]
		if m == nil || m == n || m.base != "" || m.origin != FromSB || !m.exists() || m.deleting() ||
			m.d == nil || m.d.Dependencies == nil || !w.laterValue(v) {
			continue
		}
		deps, err := callDeps(m.d, m.key, m.sb)
		if err != nil || !dependsOn(deps, n.key) || w.reaches(n, m) {
			continue
		}
		if v.value == nil || w.valueGoes(m, v.value) {
			w.push(w.startValue(v))
		}
	}
}

// obtainedRequests returns the indexes in w.values of the requests for
// values the southbound owns when the first delete asks: the few a delete
// has to look at (see obtainedDue).
func (w *walker) obtainedRequests() []int {
	if !w.obtainedMade {
		w.obtainedMade = true
		for i, v := range w.values {
			if m := w.g.nodes[v.key]; m != nil && m.base == "" && m.origin == FromSB && m.exists() {
				w.obtained = append(w.obtained, i)
			}
		}
	}
	return w.obtained
}
