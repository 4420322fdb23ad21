package kvscheduler

import "slices"

// reCreatedFirst returns, at the start of n's update (before its dropped
// derived values start going), the derived values that n's new value
// re-creates (its descriptor applies their change by a delete and a
// create, see reCreatesDerived) and that depend, of either kind, by the
// value in the southbound or the wanted one, on another value the update
// takes away: one it drops, or one it re-creates too. Left to their
// re-create, after the base's update, they would go after that other
// value, which the delete order forbids for two deletes of one step
// (TestAdv32ReCreatedDerivedValueGoesBeforeTheSiblingItIsOrderedAfter:
// b/1's update dropped d/2 and re-created d/1 = dv-w|~d/2, deleting d/2
// first; TestAdv32TwoReCreatedSiblingsGoDependentFirst). They go before
// the base changes, dependents first (see startReCreatedDeletes).
func (w *walker) reCreatedFirst(n *node, derived []KeyValuePair) []*node {
	var goes, again []*node
	for _, k := range n.derived {
		c := w.g.nodes[k]
		if c == nil || c.base != n.key || !c.exists() || c.deleting() {
			continue
		}
		i := slices.IndexFunc(derived, func(kv KeyValuePair) bool { return kv.Key == k })
		switch {
		case i < 0:
			goes = append(goes, c)
		case w.reCreatesDerived(c, derived[i].Value):
			goes, again = append(goes, c), append(again, c)
		}
	}
	var early []*node
	for _, c := range again {
		if slices.ContainsFunc(goes, func(x *node) bool { return x != c && dependsOnNode(c, x) }) {
			early = append(early, c)
		}
	}
	return dependentsFirst(early)
}

// startReCreatedDeletes starts the deletes of early (see reCreatedFirst),
// after those of the derived values n's update drops and dependents last,
// so that they end first (the last started ends first). The base's update
// then derives them again and creates them (see pushDerived).
func (w *walker) startReCreatedDeletes(n *node, early []*node) {
	if len(early) > 0 && w.rec.Revert && !w.reverting() {
		if w.earlyFrom == nil {
			w.earlyFrom = map[string]bool{}
		}
		w.earlyFrom[n.key] = true
	}
	for _, c := range slices.Backward(early) {
		if c.exists() && !c.deleting() {
			w.applyValue(frame{kind: fApply, key: c.key, base: n.key, origin: n.origin})
		}
	}
}

// reCreatesDerived tells whether changing c, an existing derived value,
// to v takes a delete and a create, as update judges it.
func (w *walker) reCreatesDerived(c *node, v any) bool {
	if c.d == nil || w.equal(c, c.sb, v) || !w.operates(c) {
		return false
	}
	return c.d.Update == nil || w.needsRecreate(c, v)
}

// dependsOnNode tells whether c depends on x, of either kind, by its
// wanted value or the one the southbound holds.
func dependsOnNode(c, x *node) bool {
	return dependsOn(c.deps, x.key) || dependsOn(c.sbDeps, x.key)
}

// waitsForReCreate tells whether n, a value of the northbound about to be
// created, has a dependency, of either kind, met only by derived values
// that their base's request further on, or its update under way,
// re-creates (see recreatedAbove): created now, on the old values, the
// re-create's delete would take it down and create it again in the same
// step, after a value it depends on went
// (TestAdv32NewDependentOfReCreatedDerivedValuesWaitsForTheirCreates:
// a/2 = w|~d/1,d/2 created before b/1's update re-created d/1 and d/2).
// It waits (PENDING) and is created once they are back.
//
// Once a value of a transaction with revert failed, the requests further
// on are not applied and the revert takes back what was: the re-create
// waited for never comes, and the value, left PENDING, held nothing its
// base's undo could hand a derived key back through
// (TestAdv36RevertedHandOverOfADerivedKeyLeavesItsBaseWithoutIt: b/1 =
// v@1|d/*, made available again by the revert's read-back, waited for
// b/2's d/2, which b/2's request, never applied, was to re-create, and
// b/2 was left without d/1).
func (w *walker) waitsForReCreate(n *node) bool {
	if n.base != "" || n.origin != FromNB || n.exists() || w.topErr && w.rec.Revert {
		return false
	}
	for _, dep := range n.deps {
		met, again := false, false
		w.g.providers(n, dep, func(p *node) bool {
			if !p.avail {
				return true
			}
			if p.base != "" && (w.recreatedAbove(p) || w.reCreateDue(p)) {
				again = true
				return true
			}
			met = true
			return false
		})
		if again && !met {
			return true
		}
	}
	return false
}

// reCreateDue tells whether p, an existing derived value, still holds a
// value that its base's wanted value, already applied, derives anew by a
// re-create still to come (its base's create or update pushed its apply,
// which has not run yet, see derivedDue): p goes for a moment then, as
// with recreatedAbove. Without a pending apply nothing would create it
// again (adv5 fuzz seed 19101684 of -fzdheld: d/1 deleted so, and left
// NONEXISTENT under a CONFIGURED b/1).
func (w *walker) reCreateDue(p *node) bool {
	if !w.derivedDue[p.key] {
		return false
	}
	b := w.g.nodes[p.base]
	if b == nil || !b.avail || !p.exists() || p.deleting() {
		return false
	}
	dv, ok := derivedValueOf(b, b.want, p.key)
	return ok && dv != nil && w.reCreatesDerived(p, dv)
}

// leftToUndo tells whether n, during a revert, is a base whose update in
// the transaction started early deletes of its derived values (see
// startReCreatedDeletes) and whose undo is still to run: those deletes
// are the update's own work, which its undo, re-applying the old value,
// undoes (derives them again). Judged before on the transaction's value,
// which the revert takes back, n went (TestAdv36RevertOfAnUpdateWhoseEarlyDeleteFailedRestoresTheBase:
// d/1's early delete failed, its read-back made it available again, and
// b/1, whose new value Requires d/2, deleted early, went into PENDING).
func (w *walker) leftToUndo(n *node) bool {
	if !w.reverting() || !w.earlyFrom[n.key] {
		return false
	}
	_, ok := w.undoLeft[n.key]
	return ok
}

// siblingDue tells whether n, a derived value re-created by its base's
// update, is ordered after a sibling (a derived value of the same base)
// that is absent and whose apply, pushed by that update, is still to run
// (see derivedDue): n then waits for that create rather than staying by
// ordering (staysByOrdering), which created it before the sibling it is
// ordered after. An early delete (reCreatedFirst) can take the sibling
// away before n's re-create (adv5 fuzz seed 20707026 of -fzrd -fzcorder:
// "create d/1 (dv-w@1@2|~d/2) while d/2, which it depends on, is absent").
func (w *walker) siblingDue(n *node) bool {
	if n.base == "" || len(w.derivedDue) == 0 {
		return false
	}
	for _, dep := range n.deps {
		if dep.Kind != OrderingOnly {
			continue
		}
		due := false
		w.g.providers(n, dep, func(p *node) bool {
			if p != n && p.base == n.base && !p.avail && w.derivedDue[p.key] {
				due = true
				return false
			}
			return true
		})
		if due {
			return true
		}
	}
	return false
}
