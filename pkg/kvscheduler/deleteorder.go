package kvscheduler

import (
	"slices"
	"strings"
)

// The delete order, one rule for every way a value goes (a transaction's
// own delete, the delete of a derived value with its base, the Requires
// cascade, a cycle, a resync's delete of what nothing wants): a value is
// deleted after the values that depend on it, of either kind, and whose
// delete the transaction has under way or still to do.
//
// The walk already does so for what a delete reaches itself: derived
// values go first, and the values that Require it are taken down (into
// PENDING) before it. What it does not reach is a dependent the
// transaction deletes by a request of its own further on: one ordered
// after the value (OrderingOnly stays when what it names goes), or one
// nothing wants (read back after a restart: nothing takes it down). Such
// a request, of the dependent or of the base it is derived from, is
// applied right away, before the value goes (see deleteDueDependents);
// so is a dependent's later update that surely takes it away, whatever
// the reason (see updateTakesAway and leaving.go), when the value goes by
// its own update rather than by a delete request (a delete request is
// postponed instead, see postponeTo).
// The end of a delete waits for a dependent whose delete is under way
// (dependentUnderWay), and deletes released together go dependents first
// (dependentsFirst).
// Sorting the transaction's own deletes beforehand could not see the
// values a delete reaches (derived values, what the cascade takes down),
// and left a dependent of those to be deleted after them.

// deleteDueDependents pushes, to run before the end of n's delete (pushed
// already), the transaction's requests further on that take away a value
// depending on n which the walk would otherwise leave in place until then
// (its delete, or an update that surely takes it away), and takes down
// (into PENDING) a dependent that the Requires cascade of such a request
// surely takes away (see cascadeLater).
func (w *walker) deleteDueDependents(n *node) {
	if len(w.dels) == 0 && len(w.values) == 0 {
		return
	}
	var down []*node // read before the graph changes (see dependents)
	for _, m := range w.g.dependents(n) {
		if m == n || !m.exists() || m.origin == FromSB || m.deleting() {
			continue
		}
		b := m
		if m.base != "" {
			if b = w.g.nodes[w.g.baseKey(m)]; b == nil {
				continue
			}
		}
		if b.deleting() {
			continue
		}
		if !w.later(b) {
			// Taken down now, into PENDING, when the cascade of a
			// request further on surely takes it away then (see
			// cascadeLater).
			if m.avail && w.cascadeLater(b, map[*node]bool{n: true}) {
				down = append(down, b)
			}
			continue
		}
		v, ok := w.dueRemoval(b.key)
		if ok && v.group == 1 && !w.cascadeSpares(m, n, nil) {
			// A re-create is applied early only for a dependent that
			// stays while n goes: one the cascade takes down goes
			// before n anyway, and its re-create, applied inside n's
			// delete, would judge its new value while n is going
			// (TestRandomGraphs seed 1240: a/g1/3, Requiring any
			// a/g1/ key, was never created again).
			ok = false
		}
		switch {
		case ok && !(m.avail && !w.mayStay(m)):
			// (A dependent the cascade takes down, into PENDING, goes
			// before n anyway.)
			w.pushDue(w.startValue(v))
		case !ok && m == b:
			if v, ok := w.updateTakesAway(m, n); ok {
				w.pushDue(w.startValue(v))
			}
		}
	}
	for _, b := range down {
		if b.avail && !b.deleting() {
			w.s.dirty(b)
			w.delete(b, delPending, false)
		}
	}
}

// updateTakesAway returns the transaction's later request of m, a value
// depending on n that the cascade spares (see cascadeSpares), when it is
// an update that surely takes m away, whatever the reason (see
// surelyGoes): its new value Requires n, which is going (n's own update
// took it into PENDING or INVALID; a delete request of n is postponed
// after an update of m that may keep it, see postponeTo), or another
// value nothing provides, or it is invalid. Applied first, m goes before n. An update
// that may keep m is left where it is: applied early inside n's delete,
// it could find missing what the transaction creates before it, and go
// for nothing.
func (w *walker) updateTakesAway(m, n *node) (txnValue, bool) {
	if !w.cascadeSpares(m, n, nil) {
		return txnValue{}, false
	}
	j, ok := w.valueIndex(w.values, m.key)
	if !ok || w.values[j].value == nil || !w.laterValue(w.values[j]) {
		return txnValue{}, false
	}
	if w.surelyGoes(m, w.values[j].value) {
		return w.values[j], true
	}
	return txnValue{}, false
}

// dueRemoval returns the transaction's request of key further on that
// deletes its value: a delete, or a re-create, whose delete goes as a
// delete request's does (adv5 fuzz seeds 17627 and 24739: r/2 = w|~a/1,
// re-created, went after a/1, which the cascade of b/1's derived values
// took down). The caller checks that it is still to come.
func (w *walker) dueRemoval(key string) (txnValue, bool) {
	if i, ok := w.dueDelete(key); ok {
		return w.dels[i], true
	}
	if j, ok := w.valueIndex(w.values, key); ok && w.values[j].group == 1 {
		return w.values[j], true
	}
	return txnValue{}, false
}

// dueDelete finds key among the transaction's deletes (sorted by key).
func (w *walker) dueDelete(key string) (int, bool) {
	return slices.BinarySearchFunc(w.dels, key, func(v txnValue, k string) int { return strings.Compare(v.key, k) })
}

// startValue starts applying v, one of the transaction's values: its
// request before it is kept for an undo, it is marked applied, and the
// frame returned applies it.
func (w *walker) startValue(v txnValue) frame {
	if w.rec.Revert {
		var prev *update
		var clash string
		var clashErr error
		if n := w.g.nodes[v.key]; n != nil {
			prev = n.last
			if n.state == Invalid {
				clash, clashErr = w.s.clashed[n], n.err
			}
			if prev == nil && n.base == "" && n.origin == FromSB && n.want != nil {
				// A value obtained from the southbound by a refresh: its
				// value is re-applied (as the reference does), not deleted.
				prev = &update{value: n.want, seq: w.rec.SeqNum}
			}
		}
		w.undos = append(w.undos, undo{v.key, prev, clash, clashErr})
	}
	if v.n != nil {
		w.applyNowNode(v.n)
	} else {
		w.applyNow(v.key)
	}
	return frame{kind: fApply, key: v.key, value: v.value, last: v.last, origin: FromNB, n: v.n}
}

// txnDeletes returns the deletes at the head of vs (group 0), sorted by
// key.
func txnDeletes(vs []txnValue) []txnValue {
	end := 0
	for end < len(vs) && vs[end].group == 0 {
		end++
	}
	return vs[:end:end]
}

// dependentsFirst orders ns, deletes released together (see
// releaseWaiters), so that a value comes before the values among them it
// depends on, of either kind, by the value in the southbound or the
// wanted one: the delete order's rule for deletes that waited, which
// applyValues' marks do not reach (a resync's read releases them before
// the transaction's values are known). Otherwise, and in a cycle, the
// order of ns stands. ns is short: the values that waited for one value.
func dependentsFirst(ns []*node) []*node {
	if len(ns) < 2 {
		return ns
	}
	out := make([]*node, 0, len(ns))
	state := make(map[*node]uint8, len(ns)) // 1 visiting, 2 placed
	var visit func(x *node)
	visit = func(x *node) {
		if state[x] != 0 {
			return
		}
		state[x] = 1
		for _, y := range ns {
			if y != x && (dependsOn(y.deps, x.key) || dependsOn(y.sbDeps, x.key)) {
				visit(y)
			}
		}
		state[x] = 2
		out = append(out, x)
	}
	for _, x := range ns {
		visit(x)
	}
	return out
}

// dependsOn tells whether one of deps names key.
func dependsOn(deps []Dependency, key string) bool {
	for _, dep := range deps {
		if dep.matchesKey(key) {
			return true
		}
	}
	return false
}

// dependentUnderWay names a value in the southbound that depends on n, of
// either kind, and whose delete is under way (started by the walk further
// up, its end still to come): n's delete ends after it (see deferDelete).
// Members of a cycle with n go together.
func (w *walker) dependentUnderWay(n *node) string {
	for _, m := range w.g.dependents(n) {
		if m != n && m.exists() && m.deleting() && !w.reaches(n, m) {
			return m.key
		}
	}
	return ""
}

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
	// A re-create (group 1) deletes n as a delete request does.
	if n == nil || !n.exists() || !(v.value == nil && v.group == 0 || v.value != nil && v.group == 1) {
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
// way, and it does not leave with x.
func (w *walker) otherProvider(m *node, dep Dependency, x *node, leaving []*node) bool {
	other := false
	w.g.providers(m, dep, func(p *node) bool {
		other = p != x && p != m && p.exists() && p.avail && !p.deleting() && !slices.Contains(leaving, p)
		return !other
	})
	return other
}

// valueIndex finds key among the transaction's values.
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

// startDerivedDeletes starts the deletes of n's derived values, last
// first, so that they end in order. A request found due before one of
// them goes (see deleteDueDependents) is pushed once all have started,
// above all their ends: it goes before the first ends, not only before
// the one whose start found it (adv5 fuzz seed 117719: a/3, ordered after
// d/1 and p/1, due at p/1's start, went after d/1, started after p/1).
func (w *walker) startDerivedDeletes(n *node) {
	outer := w.due
	var due []frame
	w.due = &due
	for _, k := range slices.Backward(n.derived) {
		w.applyValue(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
	}
	w.due = outer
	for _, f := range due {
		w.pushDue(f)
	}
}

// pushDue pushes f, a request due before a value goes, or holds it while
// derived values' deletes start (see startDerivedDeletes).
func (w *walker) pushDue(f frame) {
	if w.due != nil {
		*w.due = append(*w.due, f)
		return
	}
	w.push(f)
}
