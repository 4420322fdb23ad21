package kvscheduler

import (
	"errors"
	"fmt"
)

// Creates: a value the southbound does not hold is created once it is
// valid and its dependencies are met; otherwise it waits (PENDING, or
// INVALID or UNIMPLEMENTED until it is requested again).

// create applies n.want to a key that does not exist in the southbound;
// recreate tells that it existed until the delete half of its re-create.
func (w *walker) create(n *node, recreate bool) {
	ro := w.newOp(OpCreate, n)
	ro.Recreate = ro.Recreate || recreate
	if st, err, fields := w.check(n); st != 0 {
		w.reject(n, st, err, fields, ro)
		return
	}
	w.setDeps(n)
	if n.depErr() != nil {
		w.reject(n, Invalid, n.depErr(), nil, ro)
		return
	}
	ready, inCycle := w.readyHow(n)
	deps := allDeps
	if !ready && recreate && w.staysByOrdering(n) {
		// A re-create is the update of a value that exists: it stays,
		// changed, while only ordering-only dependencies are unmet, as a
		// value updated in place does; it is not deleted into PENDING.
		ready, deps = true, requiredDeps
	}
	if !ready {
		n.state, n.lastOp = Pending, appliedOp(recreate)
		ro.NOOP = true
		w.record(n, ro)
		w.dropStrayDerived(n)
		return
	}
	derived := w.derivedOf(n)
	if err := w.derivationErr(n, derived); err != nil {
		w.reject(n, Invalid, err, nil, ro)
		return
	}
	if w.operates(n) {
		if w.hold(n, OpCreate, ro, deps) {
			return
		}
		var md any
		w.s.calling(n.d, "Create", n.key)
		err := guard(func() (err error) { md, err = n.d.Create(w.ctx, n.key, n.want); return err })
		w.s.returned()
		if err != nil {
			w.fail(n, OpCreate, err, ro)
			return
		}
		w.s.setMetadata(n, md)
	}
	n.setSBToWant()
	n.clearHeldAbsent()
	// Its own derived set only: a derived value is created because its
	// base's value derives it, so it is no leftover of its base's.
	w.s.noteHeldBase(n)
	n.avail = true
	n.state, n.lastOp, n.err = w.okState(n), appliedOp(recreate), nil
	n.setFields(nil)
	w.appliedHere(n)
	n.resetAttempts()
	if inCycle {
		w.cycleMade = append(w.cycleMade, n)
		w.countOnMembers(n)
	}
	w.record(n, ro)
	w.pushDerived(n, derived)
	w.availChanged(n, true)
}

func (w *walker) okState(n *node) ValueState {
	if n.origin == FromSB {
		return Obtained
	}
	return Configured
}

// check rejects a value the scheduler cannot apply: no descriptor, a key
// claimed twice, a descriptor that cannot create, a failed validation.
// (Derived values that cannot be are checked once the value is ready, see
// derivationErr.)
func (w *walker) check(n *node) (ValueState, error, []string) {
	switch {
	case n.dErr() != nil:
		return Invalid, n.dErr(), nil
	case n.d == nil:
		if n.base == "" && n.origin != FromSB {
			return Unimplemented, nil, nil
		}
		return 0, nil, nil // a property, or a southbound value
	case n.origin == FromSB:
		return 0, nil, nil
	case n.d.Create == nil:
		return Invalid, fmt.Errorf("kvscheduler: descriptor %q cannot create values", n.d.Name), nil
	case n.d.Validate == nil:
		return 0, nil, nil
	}
	err := guard(func() error { return n.d.Validate(n.key, n.want) })
	if err == nil {
		return 0, nil, nil
	}
	var ive *InvalidValueError
	if errors.As(err, &ive) {
		return Invalid, err, ive.Fields
	}
	return Invalid, err, nil
}

// reject leaves n waiting as INVALID or UNIMPLEMENTED (a NOOP).
func (w *walker) reject(n *node, st ValueState, err error, fields []string, ro RecordedOp) {
	n.state, n.err = st, err
	n.setFields(fields)
	if st == Invalid {
		w.invalidated(n)
	}
	w.setDeps(n)
	ro.NOOP = true
	ro.Err = err
	w.record(n, ro)
	w.dropGoneDerived(n)
}
