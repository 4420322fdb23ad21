package kvscheduler

import "slices"

// Postponed deletes. A delete request (or a re-create, whose delete goes
// as a delete request's does) is applied after the later request that
// takes away a value ordered after it, rather than that request being
// applied early inside the delete: the walk of each value stays as it is.
// Which values leave with a value, and which the Requires cascade spares,
// are judged here for that decision.

// postponeTo returns the index of the value further on in values after
// which the delete (or re-create, whose delete goes as a delete
// request's does) values[i] is applied, or -1 to apply it now: a value
// ordered after it or after a derived value leaving with it (OrderingOnly,
// which stays when what it names goes) that a later request, not a
// delete, takes away (an update of its base that no longer derives it,
// or of itself) goes first, by its own request, rather than after it. Postponing the delete, instead of
// applying that request early inside a delete under way, leaves the
// walk of each value as it is.
func (w *walker) postponeTo(values []txnValue, i int) int {
	v := values[i]
	n := v.n
	// A re-create (group 1) deletes n as a delete request does, and so
	// does an update that surely goes (into PENDING or INVALID, see
	// surelyGoes; adv5 fuzz seed 309962: a/1's update Requiring what
	// nothing provides deleted it before d/2, ordered after it, which
	// b/1's update further on no longer derives).
	// The update's prediction is asked only when something may wait
	// for it: it costs a Validate and a dependency check.
	deletes := v.value == nil && v.group == 0 || v.value != nil && v.group == 1
	update := v.value != nil && v.group == 3
	if i == len(values)-1 || n == nil || !n.exists() || !deletes && !update {
		// (The last value has nothing further on to wait for.)
		return -1
	}
	if update && (len(n.derived) == 0 && len(w.g.dependents(n)) == 0 || !w.surelyGoes(n, v.value)) {
		return -1
	}
	at := -1
	leaving := w.leavingWith(n)
	for _, x := range leaving {
		for _, m := range w.g.dependents(x) {
			if w.leavesWith(m, n) {
				continue
			}
			at = max(at, w.postponeFor(values, i, x, m, leaving))
		}
	}
	return at
}

// leavingWith returns n and the derived values in the southbound that go
// with it, theirs included: a value ordered after one of them goes before
// n's delete as it does before n's own (adv5 fuzz seed 20209).
func (w *walker) leavingWith(n *node) []*node {
	out := []*node{n}
	for i := 0; i < len(out); i++ {
		for _, k := range out[i].derived {
			if c := w.g.nodes[k]; c != nil && c.base == out[i].key && c.exists() && c != n {
				out = append(out, c)
			}
		}
	}
	return out
}

// leavesWith tells whether m is n or one of the derived values that go
// with it (see leavingWith).
func (w *walker) leavesWith(m, n *node) bool {
	for x, hops := m, 0; x != nil && hops <= len(w.g.nodes); hops++ {
		if x == n {
			return true
		}
		if x.base == "" || !x.exists() {
			return false
		}
		x = w.g.nodes[x.base]
	}
	return false
}

// postponeFor returns the index of the request further on in values that
// takes away m, a value ordered after x (n or a value leaving with it,
// see leavingWith), when values[i]'s delete of n must wait for it, or -1.
func (w *walker) postponeFor(values []txnValue, i int, x, m *node, leaving []*node) int {
	if !m.exists() || m.origin == FromSB || m.deleting() || !w.cascadeSpares(m, x, leaving) || w.reaches(x, m) {
		return -1
	}
	b := m
	if m.base != "" {
		if b = w.g.nodes[w.g.baseKey(m)]; b == nil {
			return -1
		}
	}
	j, ok := w.valueIndex(values, b.key)
	if !ok || j <= i || values[j].value == nil || !w.laterValue(values[j]) {
		return -1
	}
	if m.base != "" && !w.releasesKey(b, m.key) || m.base == "" && w.equal(m, m.sb, values[j].value) && !w.clashAhead(values, i, j) {
		return -1
	}
	if m == b && w.surelyGoes(m, values[j].value) {
		// Its request, applied inside n's delete, takes it down first
		// (see updateTakesAway); applied before, while what it needs is
		// still there, it updated m only for the delete to take it down
		// after (an Update the southbound saw for nothing).
		return -1
	}
	return j
}

// clashAhead tells whether the request values[j], for a base that holds
// its value already, may be INVALID for a derived-key clash by the time it
// is applied: it derives a key it does not hold, which a value applied
// between values[i] and it derives too and takes first (rule 8). That the
// request takes its value away is known only once that value took the
// key, after values[i]'s delete went (adv5 fuzz seed 2970): the delete is
// postponed on the prediction, which at worst applies it a little later.
func (w *walker) clashAhead(values []txnValue, i, j int) bool {
	b := values[j]
	if b.n == nil || b.n.d == nil || b.n.d.DerivedValues == nil {
		return false
	}
	kvs, err := callDerived(b.n.d, b.key, b.value)
	if err != nil {
		return false
	}
	keys := w.txnKeys()
	for _, kv := range kvs {
		if c := w.g.nodes[kv.Key]; c != nil && c.base == b.key && c.exists() {
			continue // b holds it: a later claim is the one INVALID
		}
		for _, at := range keys[kv.Key] {
			if at > i && at < j && w.laterValue(values[at]) {
				return true
			}
		}
	}
	return false
}

// cascadeSpares tells whether m depends on x, of either kind, and the
// Requires cascade of x's delete does not take it down: each Requires
// dependency of m that x meets has another provider, in the southbound
// and not leaving with x (leaving). Such a dependent stays while x goes,
// as one ordered only after x does, so a request further on that takes
// it away goes first. Mixed kinds count (adv5 fuzz seed 201083: a/3,
// ordered after d/1 and requiring any d/ key, of which d/2 stays, was
// deleted by its update after d/1 went with its re-created base). The
// value in the southbound counts, as for the cascade (see stillNeeded):
// it is the one that goes (adv5 fuzz seed 102762: r/2, read as
// v|b/2,~a/3 and wanted as w|n/1, went after a/3).
func (w *walker) cascadeSpares(m, x *node, leaving []*node) bool {
	deps := m.deps
	if m.sbDeps != nil {
		deps = m.sbDeps
	}
	found := false
	for _, dep := range deps {
		if !dep.matchesKey(x.key) {
			continue
		}
		found = true
		if dep.Kind == Requires && !w.otherProvider(m, dep, x, leaving) {
			return false
		}
	}
	return found
}

// otherProvider tells whether m's dependency dep has a provider other
// than x that is in the southbound and stays: its delete is not under
// way, and it does not leave with x. m itself counts, as it does for
// whether m stays (see depMet): a value that Requires a pattern its own
// key matches meets it while it exists (adv5 fuzz seed 410184: a/1 =
// v|~a/2,a/*, judged taken down by a/2's delete, which it stays through;
// its update into PENDING, further on, then went after a/2).
func (w *walker) otherProvider(m *node, dep Dependency, x *node, leaving []*node) bool {
	other := false
	w.g.providers(m, dep, func(p *node) bool {
		other = p != x && p.exists() && p.avail && !p.deleting() && !slices.Contains(leaving, p)
		return !other
	})
	return other
}

// valueIndex finds key among the transaction's values. The index is built
// at the first call only (a clash, a delete's order): a batch that needs
// neither pays nothing for it.
func (w *walker) valueIndex(values []txnValue, key string) (int, bool) {
	if w.valueAt == nil {
		w.valueAt = make(map[string]int, len(values))
		for i, v := range values {
			w.valueAt[v.key] = i
		}
	}
	i, ok := w.valueAt[key]
	return i, ok
}

// laterTxnValue returns the transaction's request of key still to be
// applied, if there is one: what the delete order's predictions ask of a
// value's future (see laterKeeps, updateTakesAway, requestTakesAway).
func (w *walker) laterTxnValue(key string) (txnValue, bool) {
	j, ok := w.valueIndex(w.values, key)
	if !ok || !w.laterValue(w.values[j]) {
		return txnValue{}, false
	}
	return w.values[j], true
}
