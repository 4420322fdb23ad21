package kvscheduler

import (
	"math"
	"slices"
)

// Which requests take a value away: the delete order's rule is one rule
// for every reason a value goes in a step (see deleteorder.go), so a
// dependent that a later request of the transaction takes away goes
// before what it depends on whatever its request does to it: a new value
// that Requires what goes, that Requires what nothing provides, that
// derives a key another value keeps, or that is invalid. Each reason is
// the walk's own rule, asked in one place (valueGoes). Only a request
// that surely takes its value away is applied early: one that may keep
// it, applied before what the transaction creates further on, could make
// it go for nothing.

// surelyGoes tells whether m's request v, applied now, takes m's value
// away whatever the rest of the transaction does before reaching it
// (see valueGoes); a value the southbound owns is not judged here.
func (w *walker) surelyGoes(m *node, v any) bool {
	return m.origin != FromSB && w.valueGoes(m, v)
}

// valueGoes is surelyGoes for a request of m, whatever m's origin: a
// request takes a value the southbound owns over (see obtainedDue). It
// asks the walk's own rules, each as the walk will apply it: v is
// invalid (Validate), it derives a key that stays another value's (see
// clashStaysFor), or it Requires a key that nothing provides now nor may
// provide in this transaction, m's own derived values that v no longer
// derives aside: they go before v is judged (see update).
func (w *walker) valueGoes(m *node, v any) bool {
	return w.shadow(m, w.goes(m, v, nil), "valueGoes")
}

// goes is valueGoes, with seen the waiting values whose own requests
// the question asks already (see mayProvide).
func (w *walker) goes(m *node, v any, seen map[*node]bool) bool {
	if m.d == nil {
		return false
	}
	if w.invalid(m, v) {
		return true
	}
	var derived []KeyValuePair
	if m.d.DerivedValues != nil {
		// One that panics derives nothing, as the walk takes it (see
		// derivedOf).
		derived, _ = callDerived(m.d, m.key, v)
		if w.clashStaysFor(m, derived) {
			return true
		}
	}
	if m.d.Dependencies == nil {
		return false
	}
	deps, err := callDeps(m.d, m.key, v)
	if err != nil {
		return false
	}
	for _, dep := range deps {
		if dep.Kind == Requires && !w.mayBeMet(m, dep, derived, seen, w.judgedAt(m, v)) {
			return true
		}
	}
	return false
}

// invalid tells whether m's descriptor rejects v (Validate): a request
// that stays INVALID until it changes.
func (w *walker) invalid(m *node, v any) bool {
	return m.d != nil && m.d.rejects(m.key, v)
}

// mayBeMet tells whether m's dependency dep is met now or may be met in
// this transaction: a provider exists and its delete is not under way, or
// one is wanted (waiting, or failed: what the transaction creates may
// make it ready), or is set or derived by one of the transaction's values
// still to come, and before index before when it is not -1 (the place of
// m's own request, where the walk judges it; see judgedAt).
// m's own derived values that its new value no longer derives (not in
// derived) provide nothing: they go first (adv5 fuzz seed 2007070: b/1's
// update Requiring its own obsolete property p/1).
// A provider whose delete is under way goes: a value whose update took it
// into PENDING or INVALID waits for a later transaction. So does a wanted
// provider whose key more than one descriptor claims: nothing creates it
// before a registration changes that (adv5 fuzz seed 304888: a/2's undo
// back to w|a/3, a/3 claimed twice, surely takes a/2 away, so it goes
// before the undo of r/1, which a/2 is ordered after).
func (w *walker) mayBeMet(m *node, dep Dependency, derived []KeyValuePair, seen map[*node]bool, before int) bool {
	met := false
	w.g.providers(m, dep, func(p *node) bool {
		met = !obsoleteOf(m, p, derived) && w.mayProvide(p, seen)
		return !met
	})
	return met || w.laterProvides(dep, nil, before)
}

// judgedAt returns the index among the transaction's values of v when it
// is m's request still to come: the walk judges v there, so only the
// values before it may provide for it (see laterProvides); -1 otherwise.
func (w *walker) judgedAt(m *node, v any) int {
	if j, ok := w.valueIndex(w.values, m.key); ok && w.laterValue(w.values[j]) && identical(w.values[j].value, v) {
		return j
	}
	return -1
}

// obsoleteOf tells whether p is a derived value of m that derived, what
// m's new value derives, no longer lists.
func obsoleteOf(m, p *node, derived []KeyValuePair) bool {
	return p.base == m.key && !hasKey(derived, p.key)
}

// clashStaysFor tells whether one of derived, what m's request derives,
// is another value's and stays so through the step, by the rule of
// derivationErr: the southbound's own or requested by the northbound,
// with no request of its own further on (which may withdraw it), or
// derived by another base that still lists it and whose request further
// on, if any, derives it too (see releasesKey). m's value then goes, or
// stays, INVALID: applyReleased does not apply it in the step (adv5 fuzz
// seed 407933: b/1 clashes on d/1 with b/2, whose re-create, under way,
// derives d/1 again; a/3's update Requiring b/1 surely takes a/3 away,
// and r/1 = w|~a/1,a/3 with it, which goes before a/1).
func (w *walker) clashStaysFor(m *node, derived []KeyValuePair) bool {
	for _, kv := range derived {
		c := w.g.nodes[kv.Key]
		if c == nil || c.base == m.key || w.later(c) {
			continue
		}
		if c.base != "" {
			if b := w.g.nodes[c.base]; b == nil || !w.derivedBy(c) || w.releasesKey(b, kv.Key) {
				continue
			}
		}
		if clashErr(m, c) != nil {
			return true
		}
	}
	return false
}

// derivedGoes tells whether p is a derived value that leaves in the step
// with its base's request, the one under way or the one further on, as
// that request no longer derives p's key; it then provides nothing to
// what is judged before it goes:
//   - the base's delete is under way: its derived values all start going
//     before the first ends (see startDerivedDeletes), so one not started
//     yet goes too, unless the base's own request, re-creating it, derives
//     p's key again (adv5 fuzz seed 1101652: a/3, OBTAINED as bad|d/2,
//     taken over by w|d/1,a/*, surely goes with b/1's re-create deleting
//     d/1 and d/2; asked at d/2's start, d/1 had not started, and a/3 went
//     after d/2);
//   - the base's request further on no longer derives it (see
//     releasesKey): p leaves before that request's value is judged (adv5
//     fuzz seed 23274: b/2's update that Requires d/*, which only its own
//     obsolete d/2 provided, surely took it and a/2, which Requires b/2,
//     away; a/2, ordered after r/1, went after r/1's delete).
//
// A value of the transaction deriving p anew is a provider to come (see
// txnKeys).
func (w *walker) derivedGoes(p *node) (sure bool) {
	defer func() { w.shadow(p, sure, "derivedGoes") }()
	if p.base == "" {
		return false
	}
	b := w.g.nodes[p.base]
	if b == nil {
		return false
	}
	if b.deleting() {
		// Only a re-create brings it back (adv18: b/1 updated into
		// PENDING with the same derived keys takes d/1 away for good).
		j, ok := w.valueIndex(w.values, b.key)
		if !ok || !w.isRecreating(p) || dropsKey(b, w.values[j].value, p.key) {
			return true
		}
	}
	return w.releasesKey(b, p.key)
}

// cascadeLater tells whether the Requires cascade of a request of the
// transaction still to come surely takes x's value away: x has no request
// of its own further on that changes its value (one may change what it
// needs; see laterKeeps), and one of its
// Requires dependencies has only providers that exist and that go: their
// delete is under way (adv5 fuzz seed 9734: r/2 Requires a/1, which
// Requires d/2, going with its re-created base), or such requests surely
// take them away (see requestTakesAway), themselves or by the cascade in
// turn; no other provider may come meanwhile. Several count as one does
// (adv5 fuzz seed 102725: a/2 Requires any d/ key, and both d/1 and d/2
// went with their re-created base). seen guards against cycles of
// dependencies; it holds the value whose delete asks too, whose own
// cascade takes its dependents down in its own order. A provider with a
// request of its own further on that changes it counts when a delete
// under way takes it down (adv5 fuzz seed 603898: r/1 = w|a/3,~a/1 went
// after a/1, both taken down by b/1's delete, a/3 = w|b/1 although
// updated further on).
func (w *walker) cascadeLater(x *node, seen map[*node]bool) (sure bool) {
	defer func() { w.shadow(x, sure, "cascadeLater") }()
	return w.cascadeBy(x, seen, false)
}

// cascadeNow tells whether the cascade of the deletes under way alone
// surely takes x away (cascadeLater counting no request further on): x
// then leaves before any of those requests is applied.
func (w *walker) cascadeNow(x *node, seen map[*node]bool) bool {
	return w.cascadeBy(x, seen, true)
}

// cascadeBy is cascadeLater, or cascadeNow when nowOnly is set. A value
// whose held dependencies differ from its wanted ones (sbDeps: a failed
// update) is judged by its wanted ones all the same: the cascade takes it
// down by those (TestAdv33FailedUpdateTakenByTheCascadeGoesBeforeWhatItIsOrderedAfter).
func (w *walker) cascadeBy(x *node, seen map[*node]bool, nowOnly bool) bool {
	if seen[x] || x.base != "" || x.origin == FromSB || !x.exists() || !x.avail ||
		x.deleting() {
		return false
	}
	// A value with a request of its own further on that changes it is
	// still taken down at once by a delete under way (see depUpdate):
	// only that counts for it, not the requests further on.
	underWayOnly := nowOnly || w.later(x) && !w.laterKeeps(x)
	seen[x] = true
	for _, dep := range x.deps {
		if dep.Kind == Requires && w.depGap(x, dep, seen, underWayOnly) {
			return true
		}
	}
	return false
}

// baseOf returns the value derived value p goes with, its base's base
// for a derived value of a derived value, or p itself: the Requires
// cascade takes a base down with its derived values (adv5 fuzz seed
// 1205964: a/3 Requires b/2's property p/1, and b/2 Requires r/2, whose
// undo deletes it: a/3 surely goes, before a/1, which it is ordered
// after).
func (w *walker) baseOf(p *node) *node {
	if p.base == "" {
		return p
	}
	if b := w.g.nodes[w.g.baseKey(p)]; b != nil {
		return b
	}
	return p
}

// onlyProviders returns the providers of x's dependency dep that exist
// (available, or with their delete under way), and the index of the
// first of the transaction's values still to come that sets or derives
// another provider that may come (see laterComesAt; math.MaxInt: none).
// It returns nil when there are none that exist, or another provider may
// come at a time not known here (a wanted one, see mayBeMet).
func (w *walker) onlyProviders(x *node, dep Dependency) ([]*node, int) {
	var ps []*node
	more := false
	w.g.providers(x, dep, func(p *node) bool {
		switch {
		case p == x:
			more = true // a cycle of one
		case p.exists() && (p.avail || p.deleting()):
			ps = append(ps, p)
		case p.want == nil && w.later(p) && len(w.txnKeys()[p.key]) > 0:
			// A new value the transaction sets or derives further on:
			// it comes at its request (see laterComesAt).
		case w.mayProvide(p, nil):
			more = true
		}
		return !more
	})
	if more {
		return nil, math.MaxInt
	}
	return ps, w.laterComesAt(dep, func(k string) bool {
		return slices.ContainsFunc(ps, func(p *node) bool { return p.key == k })
	})
}

// mayProvide tells whether provider p may provide in this step: it is
// not on its way out (its delete under way, or a derived value leaving
// with its base's request, see derivedGoes), and it is available, has a
// request of its own further on, or is wanted and may be created: a
// wanted value is created once it is ready, so one whose derived values
// cannot be computed is none to come, and neither is a wanted base whose
// request surely goes (see valueGoes: invalid, INVALID for a clash that
// stays, or it Requires what nothing provides nor may provide in the
// transaction; adv5 fuzz seed 303000: a/2 = w|a/3,p/2, PENDING for p/2,
// which nothing provides, is no provider of a/* for b/1 while a/1 and
// a/3 both go). seen holds the waiting values asked so far
// in the question: one asked again, through a cycle of dependencies, may
// come (a cycle may be created as a whole). A derived value comes with
// its base, judged by its base's request.
func (w *walker) mayProvide(p *node, seen map[*node]bool) bool {
	switch {
	case p.deleting() || w.derivedGoes(p):
		return false
	case p.avail:
		return true
	case w.later(p):
		// A value the transaction sets further on comes only if its
		// own dependencies may be met (see derivedMayCome; adv5 fuzz
		// seed 2307489, TestAdv21ProviderSetByTheTransactionThatCannotComeSeed2307489:
		// b/2 = w@1|n/*, set while nothing provides n/*, was counted a
		// provider to come of a/2's update v|b/2, and a/2 went after
		// a/1, which it is ordered after).
		v, ok := w.laterTxnValue(p.key)
		return !ok || v.value == nil || p.base != "" || w.derivedMayCome(p.key, v.value, -1)
	case p.want == nil || p.dErr() != nil || p.base == "" && w.invalid(p, p.want):
		// (An invalid request is none to come, judged or not: asking
		// Validate does not recurse; adv5 fuzz seed 309962: a/1's update
		// Requiring b/2, wanted as bad|, surely goes.)
		return false
	}
	if p.base != "" || seen[p] {
		return true
	}
	if seen == nil {
		seen = map[*node]bool{}
	}
	seen[p] = true
	return !w.goes(p, p.want, seen)
}

// requestTakesAway tells whether a request of the transaction still to
// come, p's own or its base's, surely takes p's value away: a delete, a
// re-create (its delete takes away what Requires p, even if p comes back),
// an update that surely goes (see valueGoes; a takeover of a value the
// southbound owns too, which surelyGoes only keeps from being applied
// early), or an update of its base, or of a base above it, that no longer
// derives it (see nestedDrops).
func (w *walker) requestTakesAway(p *node) (sure bool) {
	defer func() { w.shadow(p, sure, "requestTakesAway") }()
	b := p
	if p.base != "" {
		if b = w.g.nodes[p.base]; b == nil {
			return false
		}
	}
	if _, ok := w.undoLeft[b.key]; ok && b != p && !b.exists() && p.exists() {
		// A derived key given back (see giveBack) to a base that is not
		// there, whose undo is still to apply: its apply takes it away
		// until that undo creates the base (TestAdv24UndoOfAKeyTakerGoesAfterItsDependent).
		return true
	}
	if i, ok := w.undoLeft[b.key]; ok && w.undoTakesAway(b, w.undos[i]) {
		// An undo still to apply is a request further on (adv5 fuzz
		// seed 406451: r/2 Requires a/*, met by a/3 alone, whose undo
		// deletes it; b/2's undo before it deleted d/1, which r/2 is
		// ordered after, before a/3's cascade took r/2 down).
		return true
	}
	if b != p && w.nestedDrops(p) {
		return true
	}
	v, ok := w.laterTxnValue(b.key)
	if !ok {
		return false
	}
	switch {
	case v.value == nil, v.group == 1:
		return true
	case b != p && w.releasesKey(b, p.key):
		return true
	}
	// A request that takes a value the southbound owns over takes it
	// away as surely (see valueGoes; adv5 fuzz seed 2108035).
	return w.valueGoes(b, v.value)
}
