package eventlooptest

import (
	"sync/atomic"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// Event is a configurable event for tests. It counts the calls of Done, so
// that tests can check that the loop calls it exactly once.
type Event struct {
	eventloop.Result

	// Name is returned by GetName; Desc by String (Name when empty).
	Name string
	Desc string
	// Kind is returned by Method.
	Kind eventloop.EventMethodType
	// Txn and Dir are returned by TransactionType and Direction.
	Txn eventloop.UpdateTransactionType
	Dir eventloop.UpdateDirectionType
	// Blocking is returned by IsBlocking.
	Blocking bool

	doneCalls atomic.Int32
}

// NewUpdate returns a BestEffort, Forward update event.
func NewUpdate(name string) *Event { return &Event{Name: name, Kind: eventloop.Update} }

// NewResync returns a FullResync event.
func NewResync(name string) *Event { return &Event{Name: name, Kind: eventloop.FullResync} }

// GetName implements eventloop.Event.
func (e *Event) GetName() string { return e.Name }

// String implements eventloop.Event.
func (e *Event) String() string {
	if e.Desc != "" {
		return e.Desc
	}
	return e.Name
}

// Method implements eventloop.Event.
func (e *Event) Method() eventloop.EventMethodType { return e.Kind }

// TransactionType implements eventloop.UpdateEvent.
func (e *Event) TransactionType() eventloop.UpdateTransactionType { return e.Txn }

// Direction implements eventloop.UpdateEvent.
func (e *Event) Direction() eventloop.UpdateDirectionType { return e.Dir }

// IsBlocking implements eventloop.Event.
func (e *Event) IsBlocking() bool { return e.Blocking }

// Done implements eventloop.Event: it counts the call and completes the
// embedded Result.
func (e *Event) Done(err error) {
	e.doneCalls.Add(1)
	e.Result.Done(err)
}

// DoneCalls returns how many times Done was called.
func (e *Event) DoneCalls() int { return int(e.doneCalls.Load()) }

// StateEvent is an Event that carries input state: its ApplyState returns
// Apply(prev), or State when Apply is nil.
type StateEvent struct {
	Event
	State any                // the new state, when Apply is nil
	Apply func(prev any) any // computes the new state from the previous one
}

// ApplyState implements eventloop.StateCarrier.
func (e *StateEvent) ApplyState(prev any) any {
	if e.Apply != nil {
		return e.Apply(prev)
	}
	return e.State
}
