package kvscheduler

import (
	"fmt"
	"slices"
)

// Updates: a value that exists in the southbound gets the wanted value,
// in place or by re-creating it.

// update applies n.want to a key that exists in the southbound.
func (w *walker) update(n *node) {
	ro := w.newOp(OpUpdate, n)
	if st, err, fields := w.check(n); st != 0 {
		// The old value goes; the new one waits to be fixed.
		n.state, n.err = st, err
		n.setFields(fields)
		if st == Invalid {
			w.invalidated(n)
			if w.undoGivesBack() && w.isApplied(w.g.baseKey(n)) {
				return // a value the undo applies again
			}
		}
		w.delete(n, delInvalid, false)
		return
	}
	equal := w.equal(n, n.sb, n.want)
	eq := sbEqualNo
	if equal {
		eq = sbEqualYes
	}
	if !equal && w.operates(n) && (n.d.Update == nil || w.needsRecreate(n, n.want)) {
		w.setDepsEq(n, eq) // what the new value waits for, while the old one goes
		w.markRecreating(n)
		w.push(frame{kind: fCreate, n: n})
		w.delete(n, delRecreate, false)
		return
	}
	derived := w.derivedOf(n)
	if err := w.derivationErr(n, derived); err != nil {
		// As an invalid value: the old value goes, the new one waits.
		n.state, n.err = Invalid, err
		w.invalidated(n)
		if w.undoGivesBack() {
			return
		}
		w.delete(n, delInvalid, false)
		return
	}
	// While its obsolete derived values go, the value is judged by what
	// its new value needs (as the reference, whose node holds the new
	// value by then): their deletes must not take it down for what only
	// its old value needed. Its value in the southbound keeps its own
	// dependencies (sbDeps) for what must not be deleted under it.
	w.setDepsEq(n, eq)
	if w.updateLeaves(n, derived) {
		// It goes: its derived values and dependents first, ordered as
		// one delete (see leavingupdate.go).
		w.delete(n, delPendingUpdate, false)
		return
	}
	n.under |= underUpdate
	w.push(frame{kind: fFinishUpd, n: n, derived: derived, equal: equal, sb: n.sb, value: n.want, op: ro})
	// Obsolete derived values are deleted before their base changes.
	// Their deletes all start before any ends (the last started ends
	// first, so they end in order): the Requires cascade then sees every
	// one of them going at once, and takes down a value that needs any
	// of them before the first ends, rather than only with the last one,
	// after a value ordered after it went (the delete order, see
	// deleteorder.go).
	for _, k := range slices.Backward(n.derived) {
		if !hasKey(derived, k) {
			w.applyValue(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
		}
	}
}

func (w *walker) finishUpdate(f frame) {
	n := f.n
	n.under &^= underUpdate
	if !w.g.has(n) || w.notAgain(n) {
		return
	}
	if !n.exists() {
		// Deleted meanwhile (its obsolete derived values took what it
		// depended on): the new value is created instead, if it can be.
		w.create(n, false)
		return
	}
	ro := f.op
	// update compared these very values unless its obsolete derived
	// values' deletes changed them: its answer stands.
	eq := sbEqualUnknown
	if identical(n.sb, f.sb) && identical(n.want, f.value) {
		eq = sbEqualNo
		if f.equal {
			eq = sbEqualYes
		}
	}
	w.setDepsEq(n, eq)
	if n.depErr() != nil {
		n.state, n.err = Invalid, n.depErr()
		w.invalidated(n)
		w.delete(n, delInvalid, false)
		return
	}
	ready, inCycle := w.readyHow(n)
	if !ready && w.staysByOrdering(n) {
		// An existing value is updated in place: ordering-only
		// dependencies order creation, not changes.
		ready, inCycle = true, false
	}
	if !ready {
		// The old value goes (its dependents first); the new one waits
		// for its dependencies.
		w.delete(n, delPendingUpdate, false)
		return
	}
	if inCycle {
		// Updated counting on members of its cycle, as a created member
		// is: checked again with them (see settleCycles; seed 426567).
		w.cycleMade = append(w.cycleMade, n)
	}
	// A property exists with the value that derives it: while one the
	// new value drops is still needed (its delete failed), the value is
	// not changed under it.
	for _, k := range n.derived {
		if c := w.g.heldDerived(n, k); c != nil && c.d == nil && !hasKey(f.derived, k) && w.neededVia(n, c) != "" {
			w.fail(n, OpUpdate, fmt.Errorf("kvscheduler: not updated: its property %s is still needed", k), ro)
			w.s.wait(n, k)
			return
		}
	}
	if !f.equal && w.operates(n) {
		// Updated in place whether its ordering-only dependencies are
		// met or not: only those that Require count.
		if w.hold(n, OpUpdate, ro, requiredDeps) {
			return
		}
		var md any
		w.s.calling(n.d, "Update", n.key)
		err := guard(func() (err error) { md, err = n.d.Update(w.ctx, n.key, n.sb, n.want, n.metadata); return err })
		w.s.returned()
		if err != nil {
			w.fail(n, OpUpdate, err, ro)
			return
		}
		w.s.setMetadata(n, md)
	}
	w.updated(n, f, ro)
}

// updated records that n's update (frame f) went through: the
// southbound holds the wanted value; its derived values follow, and the
// values that wait for it are checked again.
func (w *walker) updated(n *node, f frame, ro RecordedOp) {
	wasAvail := n.avail
	prevState := n.state
	if !f.equal {
		// An equivalent value ran no Update: the southbound keeps the
		// value it holds, and the SB view says so.
		n.setSBToWant()
	}
	n.avail = true
	n.clearHeldAbsent()
	w.s.noteHeld(n)
	w.syncSBDepsEq(n, sbEqualYes)
	n.state, n.err = w.okState(n), nil
	n.setFields(nil)
	w.appliedHere(n)
	n.resetAttempts()
	n.lastOp = OpUpdate // even for an equal value, as in the reference
	// An equal value is recorded only when its state changed, except that
	// a discovered value found as wanted is simply in sync.
	if !f.equal || prevState != n.state && prevState != Discovered {
		ro.NOOP = f.equal
		w.record(n, ro)
	}
	w.pushDerived(n, f.derived)
	w.releaseWaiters(n) // it may depend on other values now
	if !wasAvail {
		w.availChanged(n, true)
	}
}

// markRecreating records that n's derived values (as its value in the
// southbound derives them) go and come back with n's re-creation. A later
// re-creation of n in the transaction (its revert's) replaces the marks:
// a value n derived before the earlier one only is not re-created by it.
func (w *walker) markRecreating(n *node) {
	if len(n.derived) == 0 {
		return
	}
	if w.recreating == nil {
		w.recreating, w.recreations = map[string]recreateMark{}, map[string]int{}
	}
	w.recreations[n.key]++
	for _, k := range n.derived {
		w.recreating[k] = recreateMark{base: n.key, n: w.recreations[n.key]}
	}
}

// recreateMark marks a derived value re-created with its base: the
// base's n-th re-creation in the transaction.
type recreateMark struct {
	base string
	n    int
}

// isRecreating tells whether n is a derived value re-created with its
// base, by the base's latest re-creation (see markRecreating).
func (w *walker) isRecreating(n *node) bool {
	m, ok := w.recreating[n.key]
	return ok && m.base == n.base && m.n == w.recreations[n.base]
}

// undoGivesBack tells whether the transaction reverts (a value of it
// failed) and its undo gives back the value a value left INVALID (for
// its own value or a clash) holds in the southbound: deleting it would
// go before the undos that take away what is ordered after it (adv5 fuzz
// seeds 2082 and 121358), and the undo would create it again.
func (w *walker) undoGivesBack() bool {
	return w.topErr && w.rec.Revert && !w.reverting()
}
