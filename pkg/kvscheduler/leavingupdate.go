package kvscheduler

// An update that takes its value away: the delete order is decided on the
// set of values leaving in the step, known before the first of them goes.
// A value whose new value is not ready (a Requires dependency nothing
// provides, and no ordering-only reprieve) leaves with all its derived
// values, the obsolete ones included, and the Requires cascade takes its
// dependents down with it. Deleting the obsolete derived values first, as
// an update that stays does, and only then finding that the value goes,
// let those deletes end before the cascade had started the delete of a
// dependent ordered after one of them (adv5 fuzz seed 20971,
// TestAdv8CascadedDependentOrderedAfterADerivedValueGoesFirst).

// updateLeaves tells whether n's update, about to delete its obsolete
// derived values, surely ends in the delete of its value into PENDING
// (see finishUpdate): its new value, judged by the dependencies just set,
// is not ready, and deletes do not make it so. Only an update with
// obsolete derived values is decided early; otherwise the update goes its
// usual way, and the record stays as the reference's.
func (w *walker) updateLeaves(n *node, derived []KeyValuePair) (sure bool) {
	// Each sure answer must be a leave of the leaving-set model (the
	// shadow check, tests only): the step towards asking the model here.
	defer func() { w.shadow(n, sure, "updateLeaves") }()
	if n.depErr() != nil || n.origin == FromSB {
		return false
	}
	obsolete := false
	for _, k := range n.derived {
		if !hasKey(derived, k) {
			obsolete = true
			break
		}
	}
	if !obsolete {
		return false
	}
	if w.needsObsolete(n, derived) {
		return true
	}
	if ready, _ := w.readyHow(n); ready {
		return false
	}
	return !w.staysByOrdering(n)
}

// needsObsolete tells whether a Requires dependency of n's new value is
// met only by n's own derived values that derived, what the new value
// derives, no longer lists: they go before the update is judged, so it
// goes too (adv5 fuzz seed 2007070: w@2|p/1 Requires its own obsolete
// property p/1).
func (w *walker) needsObsolete(n *node, derived []KeyValuePair) bool {
	for _, dep := range n.deps {
		if dep.Kind != Requires {
			continue
		}
		mine, other := false, false
		w.g.providers(n, dep, func(p *node) bool {
			if p.avail && obsoleteOf(n, p, derived) {
				mine = true
			} else if p.avail {
				other = true
			}
			return !other
		})
		if mine && !other {
			return true
		}
	}
	return false
}

// updateSpares returns the transaction's later update of m, a value
// depending on n that n's delete takes down (into PENDING), when n is
// taken down early (before the request further on that takes it away,
// see cascadeLater) and that request is m's own update: m's update
// drops a derived value of m that n Requires. The update's new value then
// no longer needs n where n really goes, and if it is ready now (see
// readyNow), it is applied first, inside n's delete: that spares m the
// delete and the create again that its old dependency on n would cost
// for nothing (TestAdv23OwnUpdateThatDropsWhatGoesKeepsItsValue,
// TestRandomGraphs -kvleave seed 2606: b/1, updated to a value needing
// nothing and deriving nothing, was taken down by its old dependency on
// a/7, Requiring b/1's d/1, which the delete of d/5 took down at once,
// and created again by its update). Any other update stays in its place:
// applied early, it would change which values leave in the step.
func (w *walker) updateSpares(m, n *node) (txnValue, bool) {
	if n != w.earlyDown || m.base != "" || m.origin == FromSB || m.d == nil || !m.avail || m.sbDeps != nil ||
		w.mayStay(m) || !w.needsDropped(n, m) {
		return txnValue{}, false
	}
	v, ok := w.laterTxnValue(m.key)
	if !ok || v.value == nil || v.group == 1 || !w.readyNow(m, n, v.value) {
		return txnValue{}, false
	}
	return v, true
}

// readyNow tells whether m's request v, applied now, surely keeps m: v
// is valid, derives no key another value holds, and each of its
// dependencies (ordering-only ones too) is met by a value available
// now, not on its way out, other than n and m's own derived values that
// v no longer derives.
func (w *walker) readyNow(m, n *node, v any) bool {
	if w.invalid(m, v) {
		return false
	}
	var derived []KeyValuePair
	if m.d.DerivedValues != nil {
		var err error
		if derived, err = callDerived(m.d, m.key, v); err != nil {
			return false
		}
		for _, kv := range derived {
			if c := w.g.nodes[kv.Key]; c != nil && c.base != m.key && (c.exists() || c.want != nil) {
				return false
			}
		}
	}
	if m.d.Dependencies == nil {
		return true
	}
	deps, err := callDeps(m.d, m.key, v)
	if err != nil {
		return false
	}
	for _, dep := range deps {
		met := false
		w.g.providers(m, dep, func(p *node) bool {
			met = p != n && p != m && p.avail && !p.deleting() && !obsoleteOf(m, p, derived) && !w.derivedGoes(p)
			return !met
		})
		if !met {
			return false
		}
	}
	return true
}

// needsDropped tells whether a Requires dependency of n is met by a
// derived value of m that m's request further on no longer derives.
func (w *walker) needsDropped(n, m *node) bool {
	for _, dep := range n.deps {
		if dep.Kind != Requires {
			continue
		}
		found := false
		w.g.providers(n, dep, func(p *node) bool {
			found = p.base == m.key && w.releasesKey(m, p.key)
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// nestedDrops tells whether p, a derived value of a derived value b, goes
// with the request further on of a base above b: that request changes b
// into a value that no longer derives p's key, or takes b away
// (TestAdv24CascadeOfANestedDerivedProviderGoesFirst: b/1's update to y|
// keeps d/1, but d/1 = dv-y| no longer derives e/1, which r/1 Requires;
// asked only of d/1, which has no request, r/1 was spared and went after
// a/1, which it is ordered after).
// It also tells whether that request re-creates p or a value p derives
// from (see recreatedAbove): p goes then, for a moment, as surely.
func (w *walker) nestedDrops(p *node) bool {
	if w.recreatedAbove(p) {
		return true
	}
	b := w.g.nodes[p.base]
	if b == nil || b.base == "" {
		return false
	}
	v, known := w.derivedAfter(b, 0)
	return known && dropsKey(b, v, p.key)
}

// recreatedAbove tells whether the request further on of p's top base
// (or its update under way, whose derived values are applied once its
// obsolete ones went) re-creates p, derived, or a value of its chain of
// bases, as the walk's own rule judges a change (txnGroup): a re-created
// top base (TestAdv28ReCreateOfATopBaseTakesItsNestedDerivedValueAway:
// b/1 -> d/1 -> e/1), or a derived value whose new value its descriptor
// applies by re-creation
// (TestAdv28DerivedValueReCreatedByItsBasesUpdateGoesAfterItsDependents,
// TestAdv31UpdateUnderWayReCreatingADerivedValueTakesItsDependentFirst).
// Its delete takes p away, even if p comes back. A value of the chain that
// the new values no longer derive is nestedDrops's and releasesKey's.
func (w *walker) recreatedAbove(p *node) bool {
	chain := []*node{p}
	for x := p; x.base != ""; {
		bb := w.g.nodes[x.base]
		if bb == nil || len(chain) > 8 {
			return false
		}
		chain, x = append(chain, bb), bb
	}
	top := chain[len(chain)-1]
	if len(chain) == 1 {
		return false
	}
	v, ok := w.laterRequest(top)
	if !ok && top.updating() && !top.deleting() {
		v, ok = top.want, true
	} else if ok && v != nil && top.exists() && w.s.txnGroup(txnValue{key: top.key, value: v, n: top}) == 1 {
		return true
	}
	for i := len(chain) - 2; ok && i >= 0 && v != nil; i-- {
		y := chain[i]
		// A base that derives nothing, fails to derive or no longer
		// derives y leaves v nil, which ends the walk down the chain.
		v, _ = derivedValueOf(chain[i+1], v, y.key)
		if v != nil && y.exists() && w.s.txnGroup(txnValue{key: y.key, value: v, n: y}) == 1 {
			return true
		}
	}
	return false
}

// derivedAfter returns the value derived value b has once the request
// further on of its base (or of a base above it) is applied, nil when that
// request no longer derives b's key, and whether such a request is known.
// depth bounds a chain of derivations (a cycle of them is cut by
// txnKeys; here it only stops).
func (w *walker) derivedAfter(b *node, depth int) (any, bool) {
	bb := w.g.nodes[b.base]
	if bb == nil || depth > 8 {
		return nil, false
	}
	var v any
	if bb.base == "" {
		r, ok := w.laterRequest(bb)
		if !ok {
			return nil, false
		}
		v = r
	} else {
		r, ok := w.derivedAfter(bb, depth+1)
		if !ok {
			return nil, false
		}
		v = r
	}
	if v == nil {
		return nil, true
	}
	if bb.d == nil || bb.d.DerivedValues == nil {
		return nil, false
	}
	kvs, err := callDerived(bb.d, bb.key, v)
	if err != nil {
		return nil, false
	}
	for _, kv := range kvs {
		if kv.Key == b.key {
			return kv.Value, true
		}
	}
	return nil, true
}
