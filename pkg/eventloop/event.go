package eventloop

import (
	"fmt"
)

// Event is something that has happened and may cause a reaction of the
// handlers. Implementations must not change after being pushed in ways that
// matter to the methods below: the loop calls them from its own goroutine,
// and History calls String when a record is first read.
type Event interface {
	// GetName returns a short identifier of the event type, unique among event
	// types. It labels metrics, so it must not contain per-event data.
	GetName() string

	// String returns a (possibly multi-line) human-readable description.
	String() string

	// Method tells whether handlers react with an incremental change (Update)
	// or with a re-synchronization (one of the resync methods).
	Method() EventMethodType

	// IsBlocking tells whether a producer ever waits for the result of the
	// event (delivered through Done).
	IsBlocking() bool

	// Done is called by the loop exactly once for every accepted event, with
	// the outcome of its processing. It is called from the loop goroutine and
	// must not block.
	Done(err error)
}

// UpdateEvent is implemented by every event whose Method is Update.
type UpdateEvent interface {
	Event

	// TransactionType defines what happens to the changes of an event whose
	// processing failed: keep them (best effort) or revert them.
	TransactionType() UpdateTransactionType

	// Direction tells in which order the event visits the handlers.
	Direction() UpdateDirectionType
}

// StateCarrier is implemented by events that bring input state to the loop,
// for example a snapshot of watched Kubernetes objects (a resync) or a change
// of one of them (an update). The state is opaque to the loop: whoever pushes
// such events defines its type. Handlers receive the current state in
// EventHandler.Resync.
type StateCarrier interface {
	// ApplyState returns the input state as it is after this event, given the
	// state after the previous StateCarrier event (nil at first). It is called
	// on the loop goroutine before any handler sees the event, so it may
	// modify and return prev without locking.
	ApplyState(prev any) any
}

// SupersedableEvent is implemented by StateCarrier events that can find,
// when their state is applied, that the input state already holds what they
// bring or something newer. That happens when a resync re-read the source
// after they were pushed and was processed before them: Options.RefreshState
// reads the source when the loop gets to the resync, not when it was
// queued, and healing resyncs overtake queued events. Applying such an
// event would take the input state back in time (a handler would see x=7,
// then 7->6, then 6->7), so the loop calls no handler for it and commits
// nothing; it is still recorded in the history and its Done is called.
// Only Update events are skipped: a resync always reaches the handlers,
// since a resync transaction without their values would remove them all.
type SupersedableEvent interface {
	StateCarrier
	// Superseded reports, once ApplyState has run, whether the input state
	// was already newer than the event, which ApplyState then left as it
	// was.
	Superseded() bool
}

// EventMethodType tells how handlers react to an event.
type EventMethodType int

const (
	// Update events are reacted to by an incremental change (EventHandler.Update).
	Update EventMethodType = iota
	// FullResync makes handlers re-calculate all their desired state
	// (EventHandler.Resync) and the committer refresh its view of the
	// southbound before converging.
	FullResync
	// UpstreamResync is a FullResync in which the committer assumes its view
	// of the southbound is up to date.
	UpstreamResync
	// DownstreamResync does not involve handlers: the committer re-applies the
	// last desired state against a refreshed southbound. Periodic healing
	// uses it.
	DownstreamResync
)

var methodNames = [...]string{"Update", "FullResync", "UpstreamResync", "DownstreamResync"}

// String returns the name of the method.
func (m EventMethodType) String() string {
	if m >= 0 && int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("EventMethodType(%d)", int(m))
}

// IsResync reports whether the method is one of the resync methods.
func (m EventMethodType) IsResync() bool { return m != Update }

func (m EventMethodType) valid() bool { return m >= Update && m <= DownstreamResync }

// MarshalText encodes the method by name (in JSON too).
func (m EventMethodType) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("eventloop: invalid event method %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes a method name written by MarshalText.
func (m *EventMethodType) UnmarshalText(b []byte) error {
	for i, n := range methodNames {
		if n == string(b) {
			*m = EventMethodType(i)
			return nil
		}
	}
	return fmt.Errorf("eventloop: unknown event method %q", b)
}

// UpdateTransactionType defines how the changes of a failed update event are
// treated.
type UpdateTransactionType int

const (
	// BestEffort keeps the changes of the handlers that succeeded (to be as
	// close to the desired state as possible), still calls the remaining
	// handlers after an error, and schedules a healing resync.
	BestEffort UpdateTransactionType = iota
	// BestEffortIgnoreErrors is BestEffort without the healing resync: the
	// error only reaches the producer (through Done), the history and the log.
	BestEffortIgnoreErrors
	// RevertOnFailure stops at the first error, asks the handlers that
	// completed to Revert (in reverse order) and commits nothing.
	RevertOnFailure
)

// String returns the name of the transaction type.
func (t UpdateTransactionType) String() string {
	switch t {
	case BestEffort:
		return "BestEffort"
	case BestEffortIgnoreErrors:
		return "BestEffortIgnoreErrors"
	case RevertOnFailure:
		return "RevertOnFailure"
	}
	return fmt.Sprintf("UpdateTransactionType(%d)", int(t))
}

// UpdateDirectionType is the order in which an update event visits handlers.
type UpdateDirectionType int

const (
	// Forward visits handlers in the order of registration.
	Forward UpdateDirectionType = iota
	// Reverse visits handlers in the reverse order of registration, for
	// events that undo what earlier handlers built on.
	Reverse
)

// String returns the name of the direction.
func (d UpdateDirectionType) String() string {
	switch d {
	case Forward:
		return "Forward"
	case Reverse:
		return "Reverse"
	}
	return fmt.Sprintf("UpdateDirectionType(%d)", int(d))
}
