package kvscheduler

import "slices"

// The walk applies values in the reference's order (see the package
// comment): a value's change is a small tree of operations (obsolete
// derived values, the value, the dependents its create made ready, its new
// derived values), walked depth first. The tree is kept on an explicit
// stack rather than in recursive calls, so that long dependency chains
// cost no stack depth.

func (w *walker) push(f frame) { w.stack = append(w.stack, f) }

// pushRecheck pushes a re-check of n (see depUpdate). A re-check
// decides on n's state when it runs, so one still on the stack below is
// superseded by this one: it is skipped when popped (its token is not
// n's last), and a dense group, where each value's change re-checks all
// the others, costs one re-check per change instead of one per stale
// frame (TestAdvDeleteUnderADenseAnyOfGroupIsAppliedOrReported).
func (w *walker) pushRecheck(n *node) {
	n.recheckTok++
	w.push(frame{kind: fDepUpdate, n: n, tok: n.recheckTok})
}

// run applies one top-level value and everything it reaches.
func (w *walker) run(f frame) {
	w.push(f)
	w.drain(f.key)
}

// drain runs the frames on the stack.
func (w *walker) drain(from string) {
	// Every frame applies or checks one value; a walk that exceeds its
	// bound (see bound) is a bug, reported rather than left to spin.
	steps := 0
	for len(w.stack) > 0 || len(w.deferred) > 0 {
		if len(w.stack) == 0 {
			w.flushDeferred()
		}
		if steps++; steps > w.bound() {
			w.cut(from)
			break
		}
		f := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if f.kind == fDepUpdate && f.tok != f.n.recheckTok {
			steps-- // superseded (see pushRecheck): no work
			continue
		}
		switch f.kind {
		case fApply:
			w.applyValue(f)
		case fDepUpdate:
			w.depUpdate(f.n)
		case fFinishDel:
			w.finishDelete(f)
		case fFinishUpd:
			w.finishUpdate(f)
		case fCreate:
			// Not if a cascade created it meanwhile.
			if !w.failedHere(f.n) && w.g.has(f.n) && !f.n.exists() {
				w.create(f.n, true)
			}
		case fRedelete:
			w.redelete(f)
		}
	}
}

func (w *walker) applyValue(f frame) {
	n := f.n // a transaction's value comes with its node
	if n == nil {
		n = w.g.nodes[f.key]
	}
	if f.base != "" && f.value != nil {
		if b := w.g.nodes[f.base]; b == nil || !b.exists() {
			// Pushed by its base's create or update, which the walk
			// undid before this frame ran (the base went back into
			// PENDING when the cycle it was created in broke): nothing
			// derives it now, so it goes (the base's next create derives
			// it again); left PENDING, it kept the old value's
			// dependencies (seed 2111819).
			f.value = nil
		}
	}
	if n == nil {
		if f.value == nil {
			return
		}
		n = w.s.newNode(f.key)
	}
	if f.last != nil && f.base == "" && f.origin == FromNB && n.base != "" && w.derivedBy(n) {
		b := w.g.nodes[n.base]
		if f.value == nil || !w.releasesKey(b, n.key) {
			w.refuseDerivedKey(n, f.value)
			return
		}
		// Its base is requested further on with a value that no longer
		// derives it: the key is the northbound's in the state requested.
		w.noteRequestTook(n.key, b)
		w.detachDerived(b, n.key)
	}
	if f.last != nil {
		n.last = f.last // requested, even if not applied now: its retry applies it
		if len(w.s.clashed) > 0 {
			delete(w.s.clashed, n) // judged again on this request
		}
	}
	if w.notAgain(n) {
		if !w.otherRequest(n, f) && !w.derivedAgain(n, f) {
			return // failed in this transaction already
		}
		w.attemptAgain(n) // with the transaction's request
	}
	if f.last != nil && f.base == "" && f.origin == FromNB && w.skipInSync(n, f.value) {
		return // in sync: see insync.go
	}
	if f.base != "" || f.last != nil {
		w.s.setBase(n, f.base, f.origin)
	}
	if n.blocked() {
		same := n.failed() != nil && f.value != nil && w.equal(n, n.failed(), f.value) || n.failed() == nil && f.value == nil
		if same && !w.unblocks(n) && !w.renews(n) {
			return // left as it is until its value changes, a resync or its retry
		}
		w.s.clearFailure(n)
		w.s.unwait(n)
		if !same || w.kind.renew {
			n.resetAttempts()
		}
	}
	if f.last != nil && f.origin == FromNB && w.unclaimedRequest(n, f.value) {
		return
	}
	if (n.want == nil) != (f.value == nil) {
		w.availChanged(n, false) // any-of dependents list the values that wait
	}
	n.setWant(f.value)
	w.s.dirty(n)
	switch {
	case f.value == nil:
		w.delete(n, delRemove, false)
	case n.exists():
		w.update(n)
	default:
		w.create(n, false)
	}
}

// otherRequest tells whether f applies a request of the transaction for
// n other than the one n failed with in it when a release applied n's
// earlier request (see redelete; seed 629585: a delete released in a
// resync applied the request from before the resync): that failure does
// not keep the transaction's own request, further on, from being applied.
func (w *walker) otherRequest(n *node, f frame) bool {
	return f.last != nil && f.base == "" && w.released[n] && n.blocked() && !w.sameRequest(n, n.failed(), f.value)
}

// derivedAgain tells whether f derives n again, from a base the
// transaction applied anew, while n's delete, refused in this transaction
// for a value still needing it, waits for that value to go: the refused
// delete never reached the southbound, and released later it would take
// away a value the base derives (adv5 fuzz seed 80586: a full resync
// re-created the base, and a delete that waited for a dependent then
// deleted the derived value under the CONFIGURED base).
func (w *walker) derivedAgain(n *node, f frame) bool {
	return f.base != "" && f.value != nil && n.blocked() && n.failed() == nil && n.waitsOn() != "" && n.exists()
}

// depUpdate re-checks a dependent: created if it waited and is now ready,
// deleted into PENDING if it exists and no longer is.
func (w *walker) depUpdate(n *node) {
	if !w.g.has(n) || n.origin != FromNB || w.notAgain(n) {
		return
	}
	w.s.dirty(n)
	switch {
	case n.avail && (!w.mayStay(n) || w.lacksMember(n)) && !w.removalHeldBack(n):
		// Even a value blocked after a failure goes: it must not outlive
		// what it depends on.
		w.delete(n, delPending, false)
	case w.later(n):
		// Set by the transaction further on: created with its new value
		// then, not with the one it waited with; a failed delete is
		// attempted again, or not, by its new request (seed 241994: the
		// southbound held the very value requested further on).
	case n.blocked() && n.lastOp == OpDelete && n.exists() && !n.deleting() && w.unblocks(n):
		// A delete that failed, attempted again with what it depends on
		// (members of a cycle go together).
		w.s.clearFailure(n)
		w.delete(n, n.delReason(), true)
	case n.blocked() && !w.unblocks(n):
		// A failed value is created again by its retry or a resync.
	case !n.avail && !n.exists() && n.want != nil && (n.state == Pending || n.blocked()):
		w.wantRequest(n)
		if w.ready(n) {
			w.s.clearFailure(n)
			w.create(n, false)
		}
	}
}

// wantRequest makes n, a base value about to be created by a dependency
// update, want its request: a request refused earlier (its transaction
// stopped applying it at an earlier failure of the value, see notAgain)
// left n wanting what it held, and a create with that reports it
// CONFIGURED while its request is not applied (adv5 fuzz seed 3507). The
// reference's dependency update applies the last request too.
func (w *walker) wantRequest(n *node) {
	if n.base != "" || n.last == nil || n.last.value == nil || identical(n.want, n.last.value) {
		return
	}
	n.setWant(n.last.value)
	w.setDeps(n)
}

// availChanged marks the statuses of n's dependents (whose dependencies
// are met or not) as changed.
func (w *walker) availChanged(n *node, recheck bool) {
	deps := w.g.dependents(n)
	for _, m := range deps {
		w.s.dirty(m)
	}
	if recheck {
		// Re-checked right after n, in key order. A value that goes
		// makes no waiting value ready: only those it may take down (held,
		// or held after a failed delete) are re-checked. A value that comes
		// takes no held value down: only those not available are (seed
		// 443352: re-checked when a member of its cycle came, a member
		// created counting on the cycle was taken down before the rest of
		// the cycle, which the new member made ready, was created; the
		// members created with a cycle are checked once the walk is done,
		// see settleCycles).
		for _, m := range slices.Backward(deps) {
			if n.avail && m.avail || !n.avail && !m.avail && !(m.blocked() && m.exists()) {
				continue
			}
			if n.avail && m.deleting() {
				m.under |= underRecheck // its delete checks it again once done
			}
			w.pushRecheck(m)
		}
	}
}
