package kvscheduler

import (
	"slices"
	"strings"
)

// The resume: what a transaction stopped by its context left undone is
// checked again, or applied again, by the next transaction.

// What a transaction stopped by its context left undone, for the next
// transaction to check again.
type resumeKind uint8

const (
	resumeSelf       resumeKind = 1 << iota // the value: created if it waits and is ready, deleted if no longer
	resumeDependents                        // the values that depend on it
	resumeDerived                           // its derived values, if it is as wanted
	resumeRequest                           // its request, applied again: the stop reached it mid-change
)

// midChange tells whether n, whose operation the stop holds back, is a
// value of the transaction whose change the walk had begun and that the
// next transaction finishes (see resume): its request was reached, so
// what ran of it (a re-create's delete, the deletes of the derived
// values its new value drops, an undo's step) is half of a change that
// left it as no request describes it. A removal's delete that did not
// run is not: the value stays as the southbound holds it, available,
// its dependents taken back, until it is requested again or a resync
// (TestCanceledDeleteLeavesItsValueAvailable), in a transaction with
// revert as in one without (TestAdv25StoppedRemovalWithRevertLeavesItsValue);
// an undo's removal is finished, the undo being the way back to what the
// northbound holds.
func (w *walker) midChange(n *node) bool {
	if !w.appliedNode(n) || n.base != "" || n.last == nil || n.origin != FromNB {
		return false
	}
	return n.last.value != nil || n.last.undo
}

func (s *Scheduler) toResume(n *node, k resumeKind) {
	if s.resume == nil {
		s.resume = map[*node]resumeKind{}
	}
	s.resume[n] |= k
}

// resume checks again, after the transaction's own values, what a
// transaction stopped by its context left undone (see dropStack): it runs
// no operation the stopped transaction was asked for, only those that
// bring the values it reached back in line with what exists.
func (w *walker) resume() {
	if len(w.s.resume) == 0 || w.canceled != nil {
		return
	}
	if w.s.unknownUnread() {
		// Only on a view the reads confirmed: while a failed read-back
		// leaves keys unknown that this transaction did not read (one
		// that requests and resyncs nothing skips the read), the work
		// waits for the job whose read finds them. Read and failed
		// again, they are no reason to wait: their descriptor is unread
		// in this transaction, which holds every operation on them and on
		// what may depend on them (holdUnread), and the rest of the work
		// is decided on values read.
		return
	}
	todo := w.s.resume
	w.s.resume = nil
	ns := make([]*node, 0, len(todo))
	for n := range todo {
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b *node) int { return strings.Compare(a.key, b.key) })
	w.resumeRequests(ns, todo)
	for _, n := range ns {
		if w.g.nodes[n.key] != n || w.isApplied(w.g.baseKey(n)) {
			continue // gone, or applied anew
		}
		k := todo[n]
		if derived, ok := w.derivedToRestore(n, k); ok {
			if err := w.derivationErr(n, derived); err != nil {
				// A key the stopped transaction took on a request it never
				// applied went back to its base (giveBackUnapplied): a
				// clash, judged as an update judges it.
				n.state, n.err = Invalid, err
				w.s.dirty(n)
				w.invalidated(n)
				w.delete(n, delInvalid, false)
			} else {
				w.pushDerived(n, derived)
			}
		}
		if k&resumeDependents != 0 {
			w.availChanged(n, true)
		}
		if k&resumeSelf != 0 {
			w.pushRecheck(n)
		}
		w.drain(n.key)
	}
}

// resumeRequests applies again the requests of the values a stopped
// transaction reached mid-change (resumeRequest), as a retry applies a
// base's: each is marked to come first, so that none is counted on with
// what it holds half-changed, then applied in key order. The other work
// left on such a value is covered by its request's walk.
func (w *walker) resumeRequests(ns []*node, todo map[*node]resumeKind) {
	var reqs []*node
	for _, n := range ns {
		if todo[n]&resumeRequest != 0 && w.g.nodes[n.key] == n && n.last != nil && !w.isApplied(n.key) {
			reqs = append(reqs, n)
			w.setLater(n.key)
		}
	}
	// Removals first: a key the removed value held is free for the
	// value that derives it again (as an undo withdraws a taker first).
	slices.SortStableFunc(reqs, func(a, b *node) int {
		return cmpBool(a.last.value != nil, b.last.value != nil)
	})
	for _, n := range reqs {
		if w.isApplied(n.key) || w.g.nodes[n.key] != n {
			continue
		}
		w.applyNow(n.key)
		w.rec.resumed(KeyValuePair{Key: n.key, Value: n.last.value})
		w.run(frame{kind: fApply, key: n.key, value: n.last.value, last: n.last, origin: n.origin})
	}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// derivedToRestore returns the derived values the resume applies again
// for n (resumeDerived), which the southbound holds: those of its wanted
// value when it holds it, those of the value it holds when its removal's
// delete did not run (it stays as the southbound holds it, and a base
// held is never without its derived values,
// TestAdv9StoppedBaseRemovalLeavesItAvailableWithoutItsDerivedValue).
func (w *walker) derivedToRestore(n *node, k resumeKind) ([]KeyValuePair, bool) {
	if k&resumeDerived == 0 || !n.exists() || !n.avail {
		return nil, false
	}
	switch {
	case n.want != nil && w.equal(n, n.sb, n.want):
		return w.derivedOf(n), true
	case n.want == nil && n.base == "" && n.last != nil && n.last.value == nil && n.d != nil && n.d.DerivedValues != nil:
		kvs, err := callDerived(n.d, n.key, n.sb)
		if err != nil {
			return nil, false
		}
		return derivedList(n.key, kvs), true
	}
	return nil, false
}

// removalHeldBack tells whether n is a value whose northbound removal a
// stopped transaction held back before its delete ran: it stays as the
// southbound holds it until it is requested again or a resync, so a
// dependency that goes does not take it down (which would finish the
// removal by another way); what it needs stays under it instead, its
// delete failing while n exists (TestCanceledDeleteNotLeftUnderWay).
func (w *walker) removalHeldBack(n *node) bool {
	return n.exists() && n.base == "" && n.origin == FromNB && n.want == nil &&
		n.last != nil && n.last.value == nil && !n.blocked() && !w.appliedNode(n)
}

// holdDelete is hold for the delete of frame f, popped already: held back
// by a stopped transaction, the frame goes back on the stack, so that what
// the delete took down so far (its derived values, its dependents) is
// taken back as for the deletes still on it (see dropStack).
func (w *walker) holdDelete(f frame) bool {
	if w.ended() {
		w.push(f)
	}
	return w.hold(f.n, OpDelete, f.op, noDeps)
}

// unknownUnread tells whether a value a failed read-back left unknown was
// not read by this transaction: its read did not fail in it (a read that
// fails again marks its descriptor unread, see readFailed).
func (s *Scheduler) unknownUnread() bool {
	for _, n := range s.unknownNodes {
		if s.g.has(n) && s.unreadFor(n) == nil {
			return true
		}
	}
	return false
}
