package kvscheduler

import "fmt"

// Deletes: a value goes after its derived values and its dependents; one
// that a dependent still needs (its own delete failed) waits for it.

// delete removes n's value from the southbound: first its derived values,
// then the values that depend on it (into PENDING), then the value.
// waited marks the delete of a value that waited for a dependent to go.
func (w *walker) delete(n *node, reason delReason, waited bool) {
	if !n.exists() && !n.avail {
		w.deleteAbsent(n, reason)
		return
	}
	if n.dErr() != nil && n.exists() {
		w.keepAmbiguous(n)
		return
	}
	ro := w.newOp(OpDelete, n)
	ro.Recreate = ro.Recreate || reason == delRecreate
	// Held back before anything goes: its dependents and derived values
	// must not be taken down for a delete that does not happen.
	deps := noDeps
	if reason == delPending || reason == delPendingUpdate {
		deps = requiredDeps // an ordering-only dependency takes nothing down
	}
	if w.holdUnread(n, OpDelete, ro, deps) {
		return
	}
	wasAvail := n.avail
	n.under |= underDelete
	// An update under way is over: the old value goes, and the new one
	// is created after, if it can be (see finishUpdate).
	n.under &^= underUpdate
	n.avail = false // dependents stop counting on it
	w.push(frame{kind: fFinishDel, n: n, reason: reason, op: ro, waited: waited, avail: wasAvail})
	w.availChanged(n, true)
	w.recheckPropertyDependents(n)
	// Its derived values' deletes all start before any ends, as an
	// update's obsolete ones do (see update).
	w.startDerivedDeletes(n)
	// Run first: a dependent the transaction deletes may be ordered after
	// a derived value of n too.
	w.deleteDueDependents(n)
	w.obtainedDue(n)
}

// deleteAbsent handles the delete of a value that is not in the
// southbound (pending, invalid, never created): nothing to do but its
// state, and the derived values of it a read found without it.
func (w *walker) deleteAbsent(n *node, reason delReason) {
	switch reason {
	case delRemove:
		if n.state == Pending || n.state == Invalid || n.state == Unimplemented {
			ro := w.newOp(OpDelete, n)
			ro.NOOP = true
			n.state, n.err = Removed, nil
			n.setFields(nil)
			w.record(n, ro)
		}
		n.state = Removed
		w.knownAbsent(n)
	case delPending, delPendingUpdate:
		n.state = Pending
	case delInvalid:
		// The state was set by the caller.
	case delRecreate:
		// The create follows.
		return
	}
	w.dropStrayDerived(n)
}

// finishDelete deletes the value itself, once its dependents and derived
// values went; then the deletes deferred until it concluded (see
// deferDelete) are checked again.
func (w *walker) finishDelete(f frame) {
	if w.finishDeleteOrDefer(f) {
		return
	}
	w.releaseDeferred(f.n.key)
}

// finishDeleteOrDefer is finishDelete; it tells whether the delete was
// deferred (see deferDelete).
func (w *walker) finishDeleteOrDefer(f frame) bool {
	n := f.n
	ro := f.op
	n.under &^= underDelete
	recheck := n.under&underRecheck != 0
	n.under &^= underRecheck
	if !n.exists() || !w.g.has(n) {
		return false // deleted meanwhile (by a delete that waited for a dependent)
	}
	// What the southbound removed itself is gone, whatever needs it;
	// anything else (properties too) stays while a value needing it does.
	if n.origin != FromSB {
		// A derived value whose delete is under way goes first, even one
		// in a cycle with n (which stillNeeded lets go together): a base
		// never goes before what it derives. One left over from an
		// earlier value of n (its delete failed when n changed) does not
		// need n (see stillNeeded), and may be waiting for n to go: n
		// waiting for it in turn made both wait until the walk ran out,
		// and reported the leftover's delete failed although it went
		// through then (seed 581126).
		for _, k := range n.derived {
			if c := w.g.heldDerived(n, k); c != nil && c.deleting() && !n.isHeldLeftover(k) && w.deferDelete(f, k) {
				if recheck {
					n.under |= underRecheck
				}
				return true
			}
		}
		if k := w.dependentUnderWay(n); k != "" && w.deferDelete(f, k) {
			if recheck {
				n.under |= underRecheck
			}
			return true
		}
		if blocker := w.stillNeeded(n); blocker != "" {
			if w.deferDelete(f, blocker) {
				if recheck {
					n.under |= underRecheck
				}
				return true
			}
			w.fail(n, OpDelete, notDeletedError(w.g, n, blocker), ro)
			// Deleted as soon as the blocker goes (or by its retry).
			n.ext().delReason = f.reason
			w.s.wait(n, blocker)
			return false
		}
	}
	if w.operates(n) {
		if w.holdDelete(f) {
			return false
		}
		if n.d.Delete == nil {
			w.fail(n, OpDelete, fmt.Errorf("kvscheduler: descriptor %q cannot delete values", n.d.Name), ro)
			return false
		}
		w.s.calling(n.d, "Delete", n.key)
		err := guard(func() error { return n.d.Delete(w.ctx, n.key, n.sb, n.metadata) })
		w.s.returned()
		if err != nil {
			w.fail(n, OpDelete, err, ro)
			n.ext().delReason = f.reason
			return false
		}
	}
	w.deleted(n, f, recheck)
	return false
}

// deleted records that the delete of n (frame f) went through: the value
// is gone from the southbound, in the state its reason says. recheck is
// set when a value it may depend on came back while its delete was under
// way.
func (w *walker) deleted(n *node, f frame, recheck bool) {
	ro := f.op
	n.setSB(nil)
	w.keepLeftovers(n)
	w.s.leftoverGone(n)
	n.clearHeldAbsent()
	w.s.noteHeld(n)
	w.syncSBDeps(n)
	w.knownAbsent(n)
	// A failure of the value is superseded: it is gone now.
	w.s.clearFailure(n)
	n.resetAttempts()
	w.s.unwait(n)
	w.releaseWaiters(n)
	w.s.setMetadata(n, nil)
	n.lastOp = OpDelete
	w.appliedHere(n)
	switch f.reason {
	case delRemove:
		n.state, n.err = Removed, nil
		n.setFields(nil)
	case delPendingUpdate:
		n.lastOp = OpUpdate // the operation chosen, as the reference reports it
		fallthrough
	case delPending:
		n.state, n.err = Pending, nil
		n.setFields(nil)
		if f.waited || recheck {
			// What it waits for may have come back while its delete
			// was under way or waited for a dependent: then it is
			// created right away.
			w.pushRecheck(n)
		}
	case delRecreate:
		// REMOVED until the create that follows, as in the reference's
		// record.
		n.state, n.err = Removed, nil
		n.setFields(nil)
		if f.waited {
			w.push(frame{kind: fCreate, n: n}) // the create of the re-create
		}
	case delInvalid:
		// INVALID, with the error set by the caller.
	}
	w.record(n, ro)
}

// neededByHeld tells whether held value m still needs n (or what n's
// value in the southbound derives), so that n must not be deleted, nor
// changed, under it: rule 3's "never while a held value still needs it".
// m counts unless it is itself leaving in a cycle with n: its delete or
// update is under way, or its delete waits, and n needs it in turn.
// Members of a cycle go together; counting m made n wait for m and m
// for n until the walk ran out. The one test for deletes (stillNeeded)
// and updates (a property the new value drops) alike.
func (w *walker) neededByHeld(m, n *node) bool {
	if !m.exists() || m.origin == FromSB {
		return false // gone, or the southbound's own: it removes what it needs itself
	}
	return !((m.deleting() || m.updating() || m.waitsOn() != "") && w.reaches(n, m))
}

// reaches tells whether n, as the southbound holds it, needs m, directly
// or through what it needs: its dependencies (of the values in the
// southbound) and its base.
func (w *walker) reaches(n, m *node) bool {
	// m's properties exist as long as its value in the southbound derives
	// them, even once their nodes are gone (taken for gone by a delete of
	// m that then failed): a value that needs one of them needs m.
	props := w.propertiesInSB(m)
	seen := map[*node]bool{n: true}
	stack := []*node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var next []*node
		if b := w.g.nodes[x.base]; x.base != "" && b != nil && b.exists() && w.derivesInSB(b, x) {
			next = append(next, b)
		}
		deps := x.deps
		if x.sbDeps != nil {
			deps = x.sbDeps
		}
		for _, dep := range deps {
			w.g.providers(x, dep, func(p *node) bool {
				if p.exists() {
					next = append(next, p)
				}
				return true
			})
			for _, k := range props {
				if dep.matchesKey(k) {
					return true
				}
			}
		}
		for _, p := range next {
			if p == m {
				return true
			}
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false
}

// propertiesInSB returns the keys of the properties (derived values
// without a descriptor) that n's value in the southbound derives.
func (w *walker) propertiesInSB(n *node) []string {
	if !n.exists() || n.d == nil || n.d.DerivedValues == nil {
		return nil
	}
	kvs, _ := callDerived(n.d, n.key, n.sb)
	var out []string
	for _, kv := range kvs {
		if d, err := w.s.reg.owner(kv.Key); d == nil && err == nil {
			out = append(out, kv.Key)
		}
	}
	return out
}

// mayStay tells whether n's value, which is available, may stay in the
// southbound now that a value it may depend on changed: it is ready, or
// the southbound holds another value than the wanted one (a failed or
// held-back update left it), no update is under way, and that value's own
// dependencies are met. Deletes follow the dependencies that exist: a value
// whose failed request needs what goes, while the value it left in the
// southbound does not, is not taken down with it (its dependencies in the
// southbound may need what goes in turn). During an update the new value's
// dependencies decide (see update). A value ready by its wanted value but
// not by its value in the southbound stays too: what it needs there is kept
// for it (see stillNeeded).
func (w *walker) mayStay(n *node) bool {
	if w.ready(n) || w.staysByOrdering(n) {
		return true
	}
	if n.sbDeps == nil || n.updating() || !w.baseAvail(n, nil) {
		return false
	}
	for _, dep := range n.sbDeps {
		if !w.depMet(n, dep, nil) {
			return false
		}
	}
	return true
}

// derivesInSB tells whether b's value in the southbound derives x: a
// derived value left over from an earlier value of b (its delete failed
// when b changed) does not need b any more.
func (w *walker) derivesInSB(b, x *node) bool {
	if b.d == nil || b.d.DerivedValues == nil {
		return false
	}
	kvs, _ := callDerived(b.d, b.key, b.sb)
	return hasKey(kvs, x.key)
}

// stillNeeded names a value that depends on n (or derives from it) and is
// still in the southbound, its own delete having failed: n must not be
// deleted under it.
func (w *walker) stillNeeded(n *node) string {
	var ofSB []KeyValuePair // what the value in the southbound derives
	// Asked even when n lists no derived values: the nodes of properties
	// taken for gone are dropped, but the properties exist as long as n.
	if n.d != nil && n.d.DerivedValues != nil {
		ofSB, _ = callDerived(n.d, n.key, n.sb)
	}
	for _, k := range n.derived {
		// A derived value left over from an earlier value of n (its
		// delete failed when n changed) does not need n any more. Stricter
		// than neededByHeld (a base never goes before what it derives):
		// only a derived value being deleted that n needs lets n go.
		if c := w.g.heldDerived(n, k); c != nil && c.origin != FromSB && !n.isHeldLeftover(k) &&
			!(c.deleting() && w.reaches(n, c)) {
			return k
		}
	}
	if k := w.neededVia(n, n); k != "" {
		return k
	}
	// Its properties, taken for gone before it (their nodes perhaps
	// dropped since, when its delete failed), exist as long as it does: a
	// value that needs one of them and has lost every other provider
	// meanwhile (its own delete having failed) still needs n.
	for _, kv := range ofSB {
		c := w.g.nodes[kv.Key]
		switch {
		case c == nil:
			if d, err := w.s.reg.owner(kv.Key); d != nil || err != nil {
				continue // not a property
			}
			c = &node{key: kv.Key, removed: true} // not in the graph: only its key is looked at
		case c.d != nil || c.base != n.key:
			continue
		}
		if m := w.neededVia(n, c); m != "" {
			return m
		}
	}
	return ""
}

// neededVia names a value that exists, has a dependency that p (n or one of
// its properties) satisfies, and no other provider of it: n must not be
// deleted under it.
func (w *walker) neededVia(n, p *node) string {
	for _, m := range w.g.dependents(p) {
		// A dependent whose own delete or update is under way (it led
		// here) or waits (it failed for a dependent), and that n needs in
		// turn, is in a cycle with n: members of a cycle go together. An
		// update whose new value needs n, say what its old value derives,
		// then finds n gone and deletes its old value into PENDING.
		if m == n || m == p || !w.neededByHeld(m, n) {
			continue
		}
		deps := m.deps
		if m.sbDeps != nil {
			deps = m.sbDeps
		}
		if m.updating() && !m.deleting() && m.d != nil && m.d.Dependencies != nil {
			// Changed right after: what its new value needs counts. Not
			// once it is being deleted (its new value waits): its old
			// value stays in the southbound until then.
			deps, _ = callDeps(m.d, m.key, m.want)
		}
		for _, dep := range deps {
			// An ordering-only dependent does not keep what it names.
			if dep.Kind == Requires && dep.matchesKey(p.key) && !w.depMet(m, dep, nil) {
				return m.key
			}
		}
	}
	return ""
}
