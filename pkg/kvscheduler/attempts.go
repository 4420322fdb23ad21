package kvscheduler

// What a walk remembers of a value's attempts within its transaction: a
// value that failed in a transaction is not applied again in it, unless
// the transaction is one that attempts failed values again (a retry, a
// resync, a revert) or requests the value anew.

// failedHere tells whether n failed in this walk: a value that failed in
// a transaction is not applied again in it (except by its undo). Only
// failHere (called by fail) sets it; appliedHere and attemptAgain clear
// it.
func (w *walker) failedHere(n *node) bool { return n.txnSeq == w.seq && n.txnFail }

// notAgain tells whether n failed in this transaction already and this
// walk is not the transaction's undo: n is then not applied again in it
// (apply still takes another request of it, see otherRequest).
func (w *walker) notAgain(n *node) bool { return w.failedHere(n) && !w.reverting() }

// touchedHere tells whether n's operation failed or went through in this
// walk: a value the transaction already applied or failed is not taken
// for in sync (see inSyncCheck), and a failure armed for retry in it is
// recorded RETRYING (see markRetrying).
func (w *walker) touchedHere(n *node) bool { return n.txnSeq == w.seq }

// failHere notes that n's operation failed in this walk (see failedHere).
func (w *walker) failHere(n *node) { n.txnSeq, n.txnFail = w.seq, true }

// attemptAgain notes that n, failed in this walk, is attempted again in
// it (a delete released by what it waited for, or the transaction's own
// request after a release applied an earlier one): it no longer counts
// as failed here.
func (w *walker) attemptAgain(n *node) { n.txnFail = false }

// appliedHere notes that n's operation went through in this walk: it no
// longer counts as failed here (see failedHere).
func (w *walker) appliedHere(n *node) { n.txnSeq, n.txnFail = w.seq, false }

// unblocks tells whether the transaction attempts n again although it
// failed: a retry of it (or its base), a resync, a revert.
func (w *walker) unblocks(n *node) bool {
	return w.kind.unblockAll || w.reverting() || w.kind.unblock[n.key] || w.kind.unblock[w.g.baseKey(n)]
}

// renews tells whether applying n's value now attempts it again although
// it failed with that very value: an NB transaction requests it (or its
// base) again. Only the request's own apply does (a value re-checked for
// what it depends on is left to its retry), and not for a delete that
// waits for a dependent to go: that wait ends with the dependent (see
// releaseWaiters), and attempted in the meantime it would only fail again,
// and then not be applied again in the transaction when wanted again.
func (w *walker) renews(n *node) bool {
	return w.kind.renew && n.waitsOn() == "" && w.isApplied(w.g.baseKey(n))
}
