package kvscheduler

import "context"

// The walk's state: the frames of its explicit stack (see walk.go) and
// what the walker notes through one transaction.

// frameKind is what a frame of the walk's stack does when it is popped.
type frameKind uint8

const (
	fApply     frameKind = iota // apply a requested value to a key
	fDepUpdate                  // re-check a dependent after its provider changed
	fFinishDel                  // delete the value itself, after its dependents and derived values
	fFinishUpd                  // update the value, after its obsolete derived values went
	fCreate                     // create the value again, after the delete of a re-create
	fRedelete                   // delete again a value that waited for a dependent to go
)

// delReason is why a value is deleted.
type delReason uint8

const (
	delRemove   delReason = iota // no longer wanted
	delPending                   // a dependency went away (see also delPendingUpdate)
	delInvalid                   // the new value is invalid
	delRecreate                  // re-created: a create follows
)

// frame is one step of a value's change on the walk's stack.
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
	// (see Scheduler.revert): the read-back before them, and each undo's
	// own cascade, let one go before a value it is ordered after (see
	// dueUndo). It stays set during the undos: undoInOrder judges a
	// cycle before the undo runs, and the undo's cascade may break it
	// (TestAdv33UndoKeepsTheDeleteOrderOnceItsCascadeBreaksACycle).
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
	// postponed are, for a request of values the walk postponed, the
	// index of the value it is applied after (see postponeTo, requestTime).
	postponed map[int]int
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
