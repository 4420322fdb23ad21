package kvscheduler

// txnKind is what the type of a transaction makes of the rules (see
// "Transactions are requests over the same rules" in docs/kvscheduler.md):
// set when the transaction starts, the same for the whole of it.
type txnKind struct {
	// renew marks an NB transaction: the values it requests (and their
	// derived values) are attempted again even if they failed with the
	// very value requested, and count their attempts from the start.
	renew bool
	// retry marks a retry of failed operations: its operations are
	// recorded as retries (see newOp), and it takes no in-sync shortcut.
	retry bool
	// unblock are the keys whose failed values this transaction attempts
	// again (a retry, a scoped resync); all when unblockAll (a resync of
	// everything).
	unblock    map[string]bool
	unblockAll bool
}

// txnPhase is the part of a transaction under way: the same rules apply
// in each, but a read of a resync attempts failed values again, and an
// undo applies again values that failed in the transaction.
type txnPhase uint8

const (
	// phaseApply: the transaction's values are applied (and, before the
	// resync's read, what a failed read-back left unknown is read).
	phaseApply txnPhase = iota
	// phaseResyncRead: the read of a resync (or of a transaction's keys)
	// sets what the southbound holds.
	phaseResyncRead
	// phaseUndo: the undo of a transaction with revert that failed.
	phaseUndo
)

// reverting tells whether the walk is the undo of its transaction:
// values failed in it are applied again.
func (w *walker) reverting() bool { return w.phase == phaseUndo }

// resyncing tells whether the walk is reading for a resync, which
// attempts failed values again.
func (w *walker) resyncing() bool { return w.phase == phaseResyncRead }
