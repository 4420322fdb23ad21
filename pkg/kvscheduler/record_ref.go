package kvscheduler

// What the record says beyond the operations as they ran, as the
// reference's record says it: transaction numbers from 0, compressed
// PENDING operations, RETRYING at the operation whose retry is armed.

// txnNumber is the number of the transaction whose walk is numbered seq
// (see newRecord); 0 for none.
func txnNumber(seq uint64) uint64 {
	if seq == 0 {
		return 0
	}
	return seq - 1
}

// compressOp compresses the record as the reference does
// (compressTxnOps): the CREATE that left n PENDING is dropped when n's
// next operation is a CREATE (which takes its previous state, value and
// error), and a delete of n from PENDING merges into the delete that left
// it PENDING, when that was n's last operation. It tells whether ro was
// merged into the earlier operation. The dropped operations are removed
// from the record at the end of the transaction (see compact).
func (w *walker) compressOp(n *node, ro *RecordedOp) bool {
	if n.pendingOp == 0 {
		return false
	}
	i := int(n.pendingOp) - 1
	n.pendingOp = 0
	// Every operation recorded of n sets or clears its index: one that
	// names n at that index in this record is n's last (an index left
	// by an earlier transaction names another key, or n's operation
	// there in this transaction, which set it).
	if i >= len(w.rec.Executed) || w.rec.Executed[i].Key != n.key || w.rec.Executed[i].NewState != Pending {
		return false
	}
	prev := &w.rec.Executed[i]
	switch {
	case prev.Operation == OpCreate && ro.Operation == OpCreate:
		ro.PrevValue, ro.PrevErr, ro.PrevState = prev.PrevValue, prev.PrevErr, prev.PrevState
		prev.Key = "" // dropped
		w.dropped++
	case prev.Operation == OpDelete && ro.Operation == OpDelete && ro.PrevState == Pending:
		prev.NewValue, prev.Err, prev.NewState = ro.NewValue, ro.Err, ro.NewState
		if ro.NewState == Pending {
			n.pendingOp = int32(i + 1)
		}
		return true
	}
	return false
}

// compact removes the operations compressOp dropped from the record.
func (w *walker) compact() {
	if w.dropped == 0 {
		return
	}
	ops := w.rec.Executed[:0]
	for _, op := range w.rec.Executed {
		if op.Key != "" {
			ops = append(ops, op)
		}
	}
	clear(w.rec.Executed[len(ops):])
	w.rec.Executed = ops
	w.dropped = 0
}

// markRetrying records as RETRYING the failed operations whose values
// have their retry armed now, as the reference's record does: the state
// the operation left the value in, not the FAILED it was before its retry
// was scheduled.
func markRetrying(s *Scheduler, w *walker) {
	if len(w.failedNs) == 0 {
		return
	}
	for i := range w.rec.Executed {
		op := &w.rec.Executed[i]
		if op.Err == nil || op.NewState != Failed {
			continue
		}
		if n := s.g.nodes[op.Key]; n != nil && n.blocked() && n.retryGen() != 0 && w.touchedHere(n) {
			op.NewState = Retrying
		}
	}
}

// prevState is the state n is recorded in before an operation: the state
// its status reports, RETRYING for a failed value whose retry was armed
// (as in the reference, where RETRYING is a state of the value), not the
// FAILED it is kept in. Its retry may have been disarmed already by the
// walk that attempts it again (see clearFailure): the published status
// still says RETRYING then, unless it failed again in this transaction.
func (w *walker) prevState(n *node) ValueState {
	if n.state != Failed || w.failedHere(n) {
		return n.state
	}
	if n.blocked() && n.retryGen() != 0 || n.published() != nil && n.published().State == Retrying {
		return Retrying
	}
	return n.state
}

// appliedOp is the last operation of a value its create left CONFIGURED
// or PENDING, as the reference reports it: the operation the transaction
// chose for the value, CREATE, or UPDATE for a value re-created (an
// update by re-creation). A value's last operation is that chosen when it
// was last applied, whatever ran (see also finishUpdate and skipInSync).
func appliedOp(recreate bool) Operation {
	if recreate {
		return OpUpdate
	}
	return OpCreate
}

// delPendingUpdate is the delete into PENDING of a value whose new value's
// dependencies are unmet: as delPending, but its last operation is the
// UPDATE chosen for it, as the reference reports it.
const delPendingUpdate = delRecreate + 1

// newOp starts the record of an operation on n.
func (w *walker) newOp(kind Operation, n *node) RecordedOp {
	ro := RecordedOp{Operation: kind, Key: n.key, PrevValue: n.sb, NewValue: n.want, PrevState: w.prevState(n),
		PrevErr: n.err, Derived: n.base != "", Property: n.d == nil && n.base != "", Revert: w.reverting(),
		Retry: w.kind.retry}
	if len(w.recreating) > 0 && n.base != "" && w.isRecreating(n) {
		ro.Recreate = true
	}
	if w.kind.retry {
		ro.Attempt, ro.RetryFor = n.attempt(), txnNumber(n.failSeq())
		if n.attempt() == 0 {
			m := w.retryOf[w.g.baseKey(n)]
			ro.Attempt, ro.RetryFor = m.attempt, txnNumber(m.seq)
		}
	}
	return ro
}

// record ends the record of an operation on n (started by newOp) with
// the state n is left in, compressed as the reference does (see
// compressOp).
func (w *walker) record(n *node, ro RecordedOp) {
	ro.NewState = n.state
	if w.compressOp(n, &ro) {
		return
	}
	w.rec.Executed = appendDoubling(w.rec.Executed, ro)
	if ro.NewState == Pending && len(w.rec.Executed) < 1<<31-1 {
		n.pendingOp = int32(len(w.rec.Executed))
	}
}
