package kvscheduler

import (
	"maps"
	"slices"
	"strings"
)

// How a transaction ends: what it undoes when it reverts, and what it
// reports (its error, the values it left INVALID).

// undo is what a transaction with revert re-applies for a key if it
// fails: the key's request before the transaction (nil: a delete).
type undo struct {
	key  string
	prev *update
	// clash is the key the value clashed on when it was INVALID for a
	// clash before the transaction, with its error (see restoreClash).
	clash    string
	clashErr error
}

// txnOutcome is what a transaction reports besides its record.
type txnOutcome struct {
	reverted     bool
	revertFailed []KeyError
	// revertFrom is the index in the record's errors of the first error
	// of the undo (-1: no undo).
	revertFrom int
	invalid    []KeyError
}

// revert undoes a transaction with revert that failed: the failed values
// are read back first, so that the undo starts from what the southbound
// holds; then the previous requests are applied again, last first.
func (s *Scheduler) revert(w *walker, undos []undo, out *txnOutcome) {
	rec := w.rec
	pending := make(map[string]int, len(undos))
	for i, u := range undos {
		pending[u.key] = i
	}
	// The undos are among the values leaving the step: the read-back's
	// cascade, and that of the failed deletes made available again below
	// (a dependent's delete retried there releases the deletes that waited
	// for it), let the ones ordered after what they take down go first
	// (dueUndo; adv5 fuzz seed 2105355).
	w.undoPending = pending
	// undoLeft is apart from pending: undoInOrder takes an undo out of
	// pending before the undos it runs first, and out of undoLeft only
	// when it runs.
	w.undoLeft = maps.Clone(pending)
	// undoPending stays set through the undos too (see walker.undoPending).
	defer func() { w.undoLeft, w.undoPending = nil, nil }()
	from := len(rec.Errors)
	s.refreshFailed(w)
	out.revertFrom = undoErrorsLast(rec, from, undos, pending)
	// The invalid values are named as the transaction left them, before
	// the undo removes them.
	out.invalid = s.invalidOf(w)
	w.phase = phaseUndo
	w.noneLater()
	// What failed to be deleted is still there, as it was before the
	// transaction: available again, and so are its dependents.
	for _, n := range w.failedNs {
		if s.g.nodes[n.key] == n && n.lastOp == OpDelete && n.exists() && !n.avail {
			n.avail = true
			w.availChanged(n, true)
			w.drain(n.key)
		}
	}
	w.failedNs = nil
	notApplied := len(rec.NotApplied)
	for _, u := range slices.Backward(undos) {
		// The requests that took a derived key from u's key go back
		// first: u's undo then derives the key again without a clash.
		for _, k := range slices.Concat(w.requestsTookFrom(u.key), w.basesTookFrom(u.key)) {
			if i, ok := pending[k]; ok {
				w.undoInOrder(undos[i], undos, pending)
			}
		}
		if _, ok := pending[u.key]; ok {
			w.undoInOrder(u, undos, pending)
		}
	}
	for _, e := range w.rec.Errors[out.revertFrom:] {
		if ke, ok := e.(KeyError); ok {
			out.revertFailed = append(out.revertFailed, ke)
		}
	}
	// An undo the transaction's context stopped is not a revert.
	out.reverted = len(out.revertFailed) == 0 && len(rec.NotApplied) == notApplied
}

// undoErrorsLast moves, among the record's errors from index from on, the
// errors of the undos applied during the read-back (those of undos no
// longer pending) after the others, and returns the index of the first:
// they are the undo's errors, which RevertFailed names, not the
// transaction's.
func undoErrorsLast(rec *TxnRecord, from int, undos []undo, pending map[string]int) int {
	early := func(e error) bool {
		ke, ok := e.(KeyError)
		if !ok {
			return false
		}
		if _, ok := pending[ke.Key]; ok {
			return false
		}
		return slices.ContainsFunc(undos, func(u undo) bool { return u.key == ke.Key })
	}
	tail := rec.Errors[from:]
	var txn, undo []error
	for _, e := range tail {
		if early(e) {
			undo = append(undo, e)
		} else {
			txn = append(txn, e)
		}
	}
	copy(tail, append(txn, undo...))
	return from + len(txn)
}

// undoOne applies again the request u's key had before the transaction.
func (w *walker) undoOne(u undo) {
	if u.clash != "" {
		w.restoreClash(u.key, u.clash, u.clashErr)
	}
	back := w.giveBack(u.key)
	w.run(w.undoFrame(u))
	w.applyGivenBack(back)
}

// undoFrame returns the frame that applies again the request u's key had
// before the transaction (nothing: a delete).
func (w *walker) undoFrame(u undo) frame {
	last := &update{seq: w.rec.SeqNum, revert: true, undo: true}
	if u.prev != nil {
		c := *u.prev
		c.revert, c.undo = true, true
		last = &c
	}
	return frame{kind: fApply, key: u.key, value: last.value, last: last, origin: FromNB}
}

// txnError builds the error a transaction returns, nil if nothing failed.
func (s *Scheduler) txnError(w *walker, out *txnOutcome) *TransactionError {
	rec := w.rec
	var unread []*RetrieveError
	for _, re := range s.unread {
		unread = append(unread, re)
	}
	s.unread = nil
	slices.SortFunc(unread, func(a, b *RetrieveError) int { return strings.Compare(a.Descriptor, b.Descriptor) })
	terr := &TransactionError{SeqNum: rec.SeqNum, Reverted: out.reverted, RevertFailed: out.revertFailed, Retrieve: unread,
		Invalid: out.invalid, NotApplied: rec.NotApplied, Canceled: w.canceled, Cut: w.walkCut}
	for i, e := range rec.Errors {
		if ke, ok := e.(KeyError); ok && (out.revertFrom < 0 || i < out.revertFrom) {
			terr.Failed = append(terr.Failed, ke)
		}
	}
	if len(terr.Failed)+len(terr.RevertFailed)+len(terr.Retrieve)+len(terr.Invalid)+len(terr.NotApplied) == 0 && terr.Canceled == nil && terr.Cut == nil {
		return nil
	}
	return terr
}

// invalidOf names the values the transaction left INVALID: its values and
// their derived values, at any depth.
func (s *Scheduler) invalidOf(w *walker) []KeyError {
	var out []KeyError
	// A derived value has one base, so following derived values whose base
	// is the value visits each at most once: no set of visited keys.
	var stack []*node
	w.eachApplied(func(n *node) {
		stack = append(stack[:0], n)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n.state == Invalid {
				out = append(out, KeyError{Key: n.key, Operation: OpCreate, Err: n.err})
			}
			for _, c := range n.derived {
				if cn := s.g.nodes[c]; cn != nil && cn.base == n.key && !w.appliedNode(cn) {
					stack = append(stack, cn)
				}
			}
		}
	})
	slices.SortFunc(out, func(a, b KeyError) int { return strings.Compare(a.Key, b.Key) })
	return out
}
