package eventloop

import "context"

// EventHandler reacts to events. Handlers are registered in Options.Handlers;
// the order matters: if handler B reads the state of handler A, A must come
// first, so that B sees A's state already updated for the event.
type EventHandler interface {
	// String identifies the handler in logs, history and errors. It is read
	// once, when the loop is created.
	String() string

	// HandlesEvent tells whether the handler wants the event. Handlers that
	// put desired values into transactions should accept every resync event,
	// otherwise a resync removes their values.
	HandlesEvent(event Event) bool

	// Update reacts to an Update event by changing internal state and/or the
	// transaction. change is a human-readable description of what was done
	// (may be empty); it goes to the history and to the commit description.
	Update(event Event, txn UpdateOperations) (change string, err error)

	// Resync reacts to a FullResync or UpstreamResync event: the handler
	// re-calculates its state from scratch and puts every value it desires
	// into the transaction. state is the input state of the loop (see
	// StateCarrier; nil when no event has brought any). resyncCount is 1 for
	// the startup resync and grows with every later one.
	Resync(event Event, state any, resyncCount int, txn ResyncOperations) error

	// Revert undoes the internal changes made by Update for a RevertOnFailure
	// event whose processing failed. Values put into the transaction need no
	// reverting: the transaction is not committed.
	Revert(event Event) error
}

// TxnObserver is implemented by a handler whose internal state follows
// what its transactions put, not what it meant to put: a picture of the
// desired values that the next events judge from. Revert covers only a
// RevertOnFailure update that failed; an event aborted by a later handler,
// or a resync that never committed, leaves such a handler's state ahead of
// the committer's unless it is told. TxnDone tells it, after every event
// it wants (HandlesEvent), whether the values the event's handlers put
// became the desired state: also when its Update or Resync was never
// called, a handler before it having aborted the event, so that it knows
// it missed the event.
type TxnObserver interface {
	// TxnDone is called once the event's transaction was committed or
	// given up, in handler order, before Revert (if any) and before the
	// event is finalized.
	// committed is false when nothing the handlers put was committed: a
	// handler aborted the event or failed fatally, merging the external
	// configuration failed, or a RevertOnFailure transaction failed (and
	// was undone). A BestEffort commit whose operations failed is
	// committed: its values are the desired state the committer retries.
	TxnDone(event Event, committed bool)
}

// ResyncOperations is the transaction of a resync event. It is valid only
// during the handler call that received it, on that goroutine.
type ResyncOperations interface {
	// Put sets the desired value of key. A nil value is the same as Delete.
	Put(key string, value any)

	// Get returns the value put for key earlier in this transaction (by this
	// or an earlier handler), or nil.
	Get(key string) any

	// PushFollowUp queues an event caused by the current one. Follow-ups are
	// processed after the current event, in the order pushed, before any event
	// waiting in the main queue. It fails with ErrQueueFull when too many
	// follow-ups are pending, and with ErrInvalidEvent like PushEvent.
	PushFollowUp(event Event) error

	// Context is cancelled when the loop closes; handlers pass it to calls
	// that may block. It also marks the caller as the loop, so Result.Wait
	// with it fails with ErrWaitInLoop instead of deadlocking.
	Context() context.Context
}

// UpdateOperations is the transaction of an update event.
type UpdateOperations interface {
	ResyncOperations

	// Delete removes the desired value of key.
	Delete(key string)
}
