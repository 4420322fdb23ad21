package kvscheduler

// The delete order for values the southbound owns (OBTAINED). Their
// dependencies are not indexed (the southbound removes what it needs
// itself, see neededByHeld), so no walk of the graph's dependents finds
// them. A request of the transaction takes such a value over, or, for a
// derived value the southbound holds, its base's request takes it away
// with the base; when that request surely takes the southbound's value
// away (a delete, a re-create, or an update whose new value cannot be
// created or, for a base's, that no longer derives it), the value goes
// before what it depends on, as any dependent does (adv5 fuzz seed 7586:
// a/2 = w|d/1, OBTAINED, was taken over by w|d/2, which nothing
// provides, and deleted into PENDING after d/1 went with its re-created
// base; seed 25172: d/1 = v|r/2, OBTAINED under b/1, went with b/1's
// re-create after r/2).

// obtainedReq is a value the southbound owns (key) and the index in
// w.values of the request that may take it away: its own, or its base's.
type obtainedReq struct {
	key string
	at  int
}

// obtainedDue pushes, to run before the end of n's delete (pushed
// already), the transaction's requests further on that surely take away
// a value the southbound owns whose value in the southbound depends on n.
// Members of a cycle with n go together.
func (w *walker) obtainedDue(n *node) {
	for _, o := range w.obtainedRequests() {
		v := w.values[o.at]
		m := w.g.nodes[o.key]
		if m == nil || m == n || !m.exists() || m.deleting() ||
			m.d == nil || m.d.Dependencies == nil || !w.laterValue(v) {
			continue
		}
		own := m.base == "" && m.key == v.key
		if !own && m.base != v.key {
			continue // no longer derived from that base
		}
		b := w.g.nodes[v.key]
		if !sbOwned(m) && (own || b == nil || !sbOwned(b)) {
			continue
		}
		deps, err := callDeps(m.d, m.key, m.sb)
		if err != nil || !dependsOn(deps, n.key) || w.reaches(n, m) {
			continue
		}
		if own && w.takeoverTakesAway(m, v) ||
			!own && (w.requestTakesAway(m) || sbOwned(b) && w.takeoverTakesAway(b, v)) {
			w.pushDue(w.startValue(v))
		}
	}
}

// takeoverTakesAway tells whether v, the request that takes over m, a
// value the southbound owns, surely takes the southbound's value away,
// and with it the values derived from it (adv5 fuzz seed 120215: d/1 =
// v|r/2, derived from b/2, OBTAINED and re-created on its takeover, went
// after r/2).
func (w *walker) takeoverTakesAway(m *node, v txnValue) bool {
	return v.value == nil || w.takeoverRecreates(m, v.value) || w.valueGoes(m, v.value)
}

// takeoverRecreates tells whether the request v that takes over m, a
// value the southbound owns, re-creates it: its delete takes the
// southbound's value away first (adv5 fuzz seed 1265: r/2 = w|r/1, taken
// over as w|, went after r/1's re-create). Its group says update, as the
// reference's order has it for a value it did not create; the walk
// decides as for the value it takes over (see update).
func (w *walker) takeoverRecreates(m *node, v any) bool {
	return !w.equal(m, m.sb, v) && (m.d.Update == nil || w.needsRecreate(m, v))
}

// obtainedRequests returns the values the southbound owns that a request
// of the transaction takes over or away (see obtainedReq), found when
// the first delete asks: the few a delete has to look at (see
// obtainedDue).
func (w *walker) obtainedRequests() []obtainedReq {
	if w.obtainedMade {
		return w.obtained
	}
	w.obtainedMade = true
	for i, v := range w.values {
		m := w.g.nodes[v.key]
		if m == nil || m.base != "" || !m.exists() {
			continue
		}
		if m.origin == FromSB {
			w.obtained = append(w.obtained, obtainedReq{v.key, i})
		}
		for _, k := range m.derived {
			// Derived values the southbound holds, and those of a base
			// it owns: they leave with it.
			if c := w.g.nodes[k]; c != nil && c.base == m.key && (sbOwned(c) || sbOwned(m)) && c.exists() {
				w.obtained = append(w.obtained, obtainedReq{k, i})
			}
		}
	}
	return w.obtained
}

// sbOwned tells whether the southbound owns n's value: obtained from it,
// or, for a derived value, read as the southbound's under a base the
// northbound requests (its state OBTAINED, its origin its base's).
func sbOwned(n *node) bool {
	return n.origin == FromSB || n.state == Obtained
}
