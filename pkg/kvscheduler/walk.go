package kvscheduler

import (
	"context"
	"slices"
)

// The walk applies values in the reference's order (see the package
// comment): a value's change is a small tree of operations (obsolete
// derived values, the value, the dependents its create made ready, its new
// derived values), walked depth first. The tree is kept on an explicit
// stack rather than in recursive calls, so that long dependency chains
// cost no stack depth.

type frameKind uint8

const (
	fApply     frameKind = iota // apply a requested value to a key
	fDepUpdate                  // re-check a dependent after its provider changed
	fFinishDel                  // delete the value itself, after its dependents and derived values
	fFinishUpd                  // update the value, after its obsolete derived values went
	fCreate                     // create the value again, after the delete of a re-create
	fRedelete                   // delete again a value that waited for a dependent to go
)

type delReason uint8

const (
	delRemove   delReason = iota // no longer wanted
	delPending                   // a dependency went away (see also delPendingUpdate)
	delInvalid                   // the new value is invalid
	delRecreate                  // re-created: a create follows
)

type frame struct {
	kind    frameKind
	key     string
	value   any
	base    string
	origin  Origin
	last    *update // for a top-level value: the request
	n       *node
	reason  delReason
	derived []KeyValuePair // fFinishUpd: the new derived values
	equal   bool           // fFinishUpd: the value did not change
	sb      any            // fFinishUpd: the value in the southbound equal compared (with value, the wanted one)
	waited  bool           // fFinishDel: the delete waited for a dependent to go
	avail   bool           // fFinishDel: the value was available before its delete began
	noDefer bool           // fFinishDel: not to be deferred again (see flushDeferred)
	op      RecordedOp     // fFinishDel, fFinishUpd: the operation being built
	tok     uint32         // fDepUpdate: the re-check's token (see pushRecheck)
}

// walker executes one transaction.
type walker struct {
	s   *Scheduler
	g   *graph
	rec *TxnRecord
	seq uint64
	ctx context.Context

	stack []frame
	// A key the transaction names is marked applied (set by the
	// transaction itself: only its failures fail, and revert, it; failures
	// of values reached by cascade are recorded on those values) or later
	// (a value of the transaction not applied yet). The marks are kept on
	// the keys' nodes (see keymarks.go); marks holds those of keys without
	// a node when marked.
	marks map[string]keyMark
	// marked are the nodes marked in this walk (see keymarks.go).
	marked   []*node
	topErr   bool
	failedNs []*node
	// kind is what the transaction's type makes of the rules, and phase
	// the part of the transaction under way (see txnkind.go).
	kind     txnKind
	phase    txnPhase
	canceled error
	// refreshed are the failed values already read back.
	refreshed map[*node]bool
	// noRetry are the values that failed in a transaction with revert,
	// outside its undo: FAILED, never RETRYING, as in the reference.
	noRetry map[*node]bool
	// retryOf holds, in a retry, the attempt and the original transaction
	// of the failed values of each retried base, for the operations on
	// values that did not fail themselves.
	retryOf map[string]retryMark
	// cycleMade are the values created (or updated) in the transaction as
	// members of a cycle, counting on the other members being created too.
	cycleMade []*node
	// countedOn are the ordering-only dependencies of cycleMade members
	// no value met when they were created (see countOnMembers); settling
	// those of the members settleCycles checks.
	countedOn, settling map[*node][]Dependency
	// inSyncBuf is reused by the in-sync shortcut (see skipInSync).
	inSyncBuf []inSyncEntry
	// deferred are the ends of deletes waiting for the delete under way of
	// another key, in the order they were deferred (see deferDelete).
	deferred []deferredFinish
	// recreating are the derived values of the values the transaction
	// re-creates (as their values derived them before): their operations
	// are recorded as re-creations, as in the reference; recreations
	// counts the re-creations of each such value (see markRecreating).
	recreating  map[string]recreateMark
	recreations map[string]int
	// dropped counts the operations compressOp dropped from the record.
	dropped int
	// readChanged are the values whose availability a resync's read
	// changed (see recheckRead).
	readChanged []readChange
	// released are the values whose earlier request a release applied
	// (see redelete and otherRequest).
	released map[*node]bool
	// readOwned are the values a read of the transaction reported with
	// origin FromSB, the southbound's own by its own word (see
	// leftToOther); made at the first.
	readOwned map[*node]bool
	// dels are the transaction's deletes, sorted by key, and undos the
	// requests an undo re-applies, in the order the values were applied
	// (see deleteorder.go).
	dels  []txnValue
	undos []undo
	// undoPending indexes, by key, the undos of a revert still to apply
	// (see Scheduler.revert): the read-back before them lets one go
	// before a value it is ordered after (see dueUndo).
	undoPending map[string]int
	// undoLeft indexes, by key, the undos still to apply from the start
	// of the revert's read-back to the end of the undo: they are among
	// the requests that take values away (see requestTakesAway).
	undoLeft map[string]int
	// walkCut is the error of the first walk of the transaction that
	// exceeded its bound (see cut).
	walkCut error
	// shadowed are the old predictions' sure answers, kept only while a
	// test checks them against the leaving set (see shadow).
	shadowed []shadowAnswer
	shadowOn bool
	// values are an NB transaction's values, and valueAt their indexes
	// by key, built at the first derived-key clash (see laterRequest).
	values  []txnValue
	valueAt map[string]int
	// provides are the keys the transaction's values set or derive, made
	// at the first question of the delete order (see txnKeys).
	provides map[string][]int
	// derivedAt are, for a key the transaction's values derive, the
	// derived value at each index of provides (see derivedMayCome).
	derivedAt map[string]map[int]any
	// derivedAsked are the derived keys derivedMayCome is asking, through
	// every prediction it asks in turn: one asked again, through a cycle
	// of dependencies (mayProvide asks valueGoes, which asks
	// laterProvides), may come.
	derivedAsked map[string]bool
	// earlyDown is the value deleteDueDependents is taking down early,
	// before the request further on that takes it away (see
	// updateSpares), while its delete starts.
	earlyDown *node
	// obtained are the values the southbound owns that the
	// transaction's requests take over or away, made at the first
	// question of the delete order (see obtainedDue); obtainedMade tells
	// it was.
	obtained     []obtainedReq
	obtainedMade bool
	// due holds, while a delete starts its derived values' deletes, the
	// requests found due before one of them goes (see pushDue).
	due *[]frame
	// restoring are the keys whose undo restores their INVALID state
	// for a clash, with the key they clashed on (see restoreClash).
	restoring map[string]restoredClash
	// takenFrom are, in a transaction with revert, the derived keys taken
	// over in it, each with the base it was taken from (see giveBack).
	takenFrom map[string]string
	// restoringSB is the derived value the undo gives back to a base the
	// southbound owns, while that is applied (see applyGivenBack).
	restoringSB *node
	// requestTook are, in a transaction with revert, the derived keys the
	// northbound's requests took over in it, by the base they were taken
	// from (see noteRequestTook).
	requestTook map[string][]string
	// tookOn are the derived keys taken over in the transaction on the
	// strength of a base's later request (see giveBackUnapplied).
	tookOn []takeover
}

// readChange is a value whose availability a read changed, and what the
// read found.
type readChange struct {
	n     *node
	avail bool
}

// retryMark is the attempt of a retry and the transaction it retries
// (the walk's number).
type retryMark struct {
	attempt int
	seq     uint64
}

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
