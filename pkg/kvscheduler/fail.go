package kvscheduler

import (
	"fmt"
	"slices"
)

// Failures during the walk: operations held back (a failed read, an ended
// context) and operations that failed.

// hold refuses an operation while the descriptor (or its base's, or with
// deps those of what it depends on) could not be read in this
// transaction's refresh, or once the transaction's context has ended.
func (w *walker) hold(n *node, kind Operation, ro RecordedOp, deps depsRead) bool {
	if w.ended() {
		// A value of the transaction itself stays as it was, until
		// requested again or a resync; one its operations reached is
		// checked again by the next transaction.
		switch m, k := w.undoneAt(n.key, n.base); {
		case k == resumeDerived:
			w.s.toResume(m, k)
		case !w.appliedNode(n):
			if kind == OpCreate && !n.exists() {
				n.state = Pending // wanted, and not created yet
			}
			w.s.toResume(n, resumeSelf)
		case w.midChange(n):
			// The rest of a change the walk began (a re-create's create
			// after its delete, a base's update after its obsolete
			// derived deletes): not in sync, its request is applied
			// again by the next transaction.
			if kind == OpCreate && !n.exists() {
				n.state = Pending // wanted, and not created yet
				w.s.dirty(n)
			}
			w.s.toResume(n, resumeRequest)
		}
		w.dropStack()
		w.rec.notApplied(n.key)
		return true
	}
	return w.holdUnread(n, kind, ro, deps)
}

// depsRead says which of a value's dependencies an operation is decided
// on, and so must have been read: none (a delete no longer wanted), those
// that Require (what decides whether a value that exists stays, is
// updated in place or goes into PENDING: see staysByOrdering), or all (a
// create, which waits for ordering-only dependencies too).
type depsRead uint8

const (
	noDeps depsRead = iota
	requiredDeps
	allDeps
)

// holdUnread refuses an operation on n decided on what a failed read of
// this transaction could not see: n itself or its base, and with deps
// what n depends on (a create or update counts on it existing, a delete
// into PENDING on it being gone; see depsRead). The value is not attempted: it stays as
// believed, FAILED with the RetrieveError, and still serves its
// dependents if it did.
func (w *walker) holdUnread(n *node, kind Operation, ro RecordedOp, deps depsRead) bool {
	re := w.s.unreadFor(n)
	if re == nil && deps != noDeps {
		re = w.s.unreadDeps(n, deps == allDeps)
	}
	if re == nil {
		return false
	}
	avail := n.avail
	w.fail(n, kind, fmt.Errorf("kvscheduler: not applied: %w", re), ro)
	if avail && !n.avail {
		n.avail = true
		w.availChanged(n, false)
	}
	return true
}

// cut stops a walk that exceeded its bound, as an ended context stops
// one: the values of the frames dropped are not applied (TxnRecord.
// NotApplied, checked again by the next transaction), and Commit fails
// with TransactionError.Cut. Never a silent success: the transaction did
// not do what it was asked.
func (w *walker) cut(from string) {
	err := fmt.Errorf("kvscheduler: the walk from %s did not end; %d operations dropped", from, len(w.stack)+len(w.deferred))
	w.rec.Errors = append(w.rec.Errors, err)
	if w.walkCut == nil {
		w.walkCut = err
	}
	seen := map[string]bool{}
	add := func(f frame) {
		k := f.key
		if f.n != nil {
			k = f.n.key
		}
		if !seen[k] && !slices.Contains(w.rec.NotApplied, k) {
			seen[k] = true
			w.rec.NotApplied = append(w.rec.NotApplied, k)
		}
	}
	for _, f := range w.stack {
		add(f)
	}
	for _, d := range w.deferred {
		add(d.f)
	}
	w.dropStack()
}

// ended tells whether the transaction's context has ended, and the first
// time it has, records why.
func (w *walker) ended() bool {
	if w.canceled == nil && w.ctx != nil && w.ctx.Err() != nil {
		w.canceled = ctxError(w.ctx)
	}
	return w.canceled != nil
}

// fail records a failed operation: n is left as the southbound holds it
// (refreshed after the transaction) and blocked until its retry. A
// failure while the transaction's context has ended (typically the
// callback's own error for it) stops the transaction and is reported with
// its cancellation.
func (w *walker) fail(n *node, kind Operation, err error, ro RecordedOp) {
	w.ended()
	x := n.ext()
	if x.attempt == 0 {
		x.failSeq = w.seq
	}
	x.attempt++
	x.failed = &failedReq{want: n.want}
	n.err, n.lastOp = err, kind
	w.s.disarm(n)
	w.s.unwait(n)
	w.failHere(n)
	n.state = Failed
	if kind != OpUpdate && n.avail {
		n.avail = false
		w.availChanged(n, false)
	}
	if kind == OpDelete {
		// Its derived values went first: it lists those still held, as
		// its read back would. Those gone are nobody's, free for another
		// base that lost the key to n (see regain.go; seed 2010311).
		listed := n.derived
		w.keepLeftovers(n)
		w.forgetUnlisted(n, listed)
	}
	if kind == OpUpdate && !n.avail && n.exists() && !n.deleting() {
		// A failed update leaves the value held as it was, and wanted:
		// it serves its dependents as any held value does, even after an
		// earlier delete of it failed (seeds 992, 7838; the reference's
		// read-back finds it and makes it available too).
		n.avail = true
		w.availChanged(n, true)
	}
	if kind == OpCreate {
		// Members of its cycle created before it counted on it: they go
		// back to waiting until it exists.
		for _, m := range slices.Backward(w.g.dependents(n)) {
			if m.avail {
				w.pushRecheck(m)
			}
		}
		w.cycleBroken(n)
	}
	ro.Err = err
	if w.rec.Revert && !w.reverting() {
		if w.noRetry == nil {
			w.noRetry = map[*node]bool{}
		}
		w.noRetry[n] = true
	} else {
		delete(w.noRetry, n) // a failed undo may be retried
	}
	w.syncSBDeps(n)
	w.record(n, ro)
	w.rec.Errors = append(w.rec.Errors, KeyError{Key: n.key, Operation: kind, Err: err})
	w.failedNs = append(w.failedNs, n)
	if w.isApplied(w.g.baseKey(n)) {
		w.topErr = true
	}
}

// invalidated notes that n was left INVALID: as in the reference, whose
// create and update return the validation error, a value of the
// transaction (or one derived from it) that is invalid fails the
// transaction, and so makes a transaction with revert revert.
func (w *walker) invalidated(n *node) {
	if w.isApplied(w.g.baseKey(n)) {
		w.topErr = true
	}
}

// cycleBroken re-checks, after n failed to be created, the values created in
// the transaction as members of a cycle: they counted on the other members,
// n perhaps, or one waiting for n that will not be created now either.
// Those left without what they need go back to waiting (deleted into
// PENDING, with what depends on them), in the order they were created.
func (w *walker) cycleBroken(n *node) {
	for _, m := range slices.Backward(w.cycleMade) {
		if m != n && m.avail && w.g.has(m) {
			w.pushRecheck(m)
		}
	}
}

// settleCycles checks again, once the transaction's values are applied,
// the values it created as members of a cycle: they counted on the other
// members and on what those wait for, which later operations may have
// taken away (a value a waiting member needs went before that member was
// created). Those left without what they need go back to waiting. It runs
// once the walk is done: checked at every delete, members a walk is still
// creating were taken down and created again without end (seed 54039).
func (w *walker) settleCycles() {
	if len(w.cycleMade) == 0 {
		return
	}
	w.cycleBroken(nil)
	w.cycleMade = nil // those the checks create again are checked by the next call
	w.settling, w.countedOn = w.countedOn, nil
	w.drain("the members of cycles")
	w.settling = nil
}

// dropStack drops the frames left on the stack: the deletes and updates
// they would have finished are no longer under way. A value whose delete
// did not run is still in the southbound and as available as it was; what
// the dropped frames would have done to others (dependents taken down by
// that delete, dependents to create, derived values to apply) is checked
// again by the next transaction (see resume).
func (w *walker) dropStack() {
	for _, d := range w.deferred {
		w.stack = append(w.stack, d.f)
	}
	w.deferred = nil
	for _, f := range w.stack {
		if f.n != nil && f.kind != fApply && f.kind != fDepUpdate && w.midChange(f.n) {
			// The rest of a change of the transaction's value: its
			// delete, update or re-create began (see resume).
			w.s.toResume(f.n, resumeRequest)
		}
		switch f.kind {
		case fFinishDel:
			f.n.under &^= underDelete
			if f.n.exists() && f.avail && !f.n.avail {
				f.n.avail = true
				w.availChanged(f.n, false)
			}
			w.s.toResume(f.n, resumeDependents|resumeDerived)
		case fFinishUpd:
			f.n.under &^= underUpdate
			w.s.toResume(f.n, resumeSelf)
		case fDepUpdate, fCreate, fRedelete:
			w.s.toResume(f.n, resumeSelf)
		case fApply:
			if m, k := w.undoneAt(f.key, f.base); m != nil {
				w.s.toResume(m, k)
			}
		}
	}
	w.stack = w.stack[:0]
	w.giveBackUnapplied()
}

// undoneAt tells what the next transaction checks again for the value at
// key (derived from base, when set) whose apply a transaction stopped by
// its context left undone: a derived value through its base (its derived
// values, applied again if it is as wanted), any other value itself (nil
// when it has no node).
func (w *walker) undoneAt(key, base string) (*node, resumeKind) {
	if b := w.g.nodes[base]; base != "" && b != nil {
		return b, resumeDerived
	}
	return w.g.nodes[key], resumeSelf
}

// bound is how many frames a walk may run before it is cut: in proportion
// to the values in the graph, read at every step because the walk grows
// the graph as it creates derived values; tests may set a bound of their
// own.
func (w *walker) bound() int {
	if b := w.s.walkBound.Load(); b > 0 {
		return int(b)
	}
	return 64 * (len(w.g.nodes) + 64)
}
