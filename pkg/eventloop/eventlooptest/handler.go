package eventlooptest

import (
	"sync"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// Call is one recorded handler call.
type Call struct {
	Handler string // the handler's name
	Op      string // "update", "resync" or "revert"
	Event   string // the event's name
}

// CallLog records calls of several handlers in one sequence, to check their
// relative order. Safe for concurrent use.
type CallLog struct {
	mu    sync.Mutex
	calls []Call
}

// Add appends a call.
func (l *CallLog) Add(c Call) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// Calls returns the calls so far.
func (l *CallLog) Calls() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// Handler is a configurable eventloop.EventHandler that records its calls.
// Nil functions accept every event and succeed without changes.
type Handler struct {
	// Name is returned by String.
	Name string
	// Handles filters events (nil: all events).
	Handles func(ev eventloop.Event) bool
	// OnUpdate, OnResync and OnRevert implement the handler methods.
	OnUpdate func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error)
	OnResync func(ev eventloop.Event, state any, resyncCount int, txn eventloop.ResyncOperations) error
	OnRevert func(ev eventloop.Event) error
	// Log, if set, also receives every call.
	Log *CallLog

	calls CallLog
}

// NewHandler returns a handler that accepts every event and does nothing,
// recording its calls in log (which may be nil).
func NewHandler(name string, log *CallLog) *Handler { return &Handler{Name: name, Log: log} }

func (h *Handler) record(op string, ev eventloop.Event) {
	c := Call{Handler: h.Name, Op: op, Event: ev.GetName()}
	h.calls.Add(c)
	if h.Log != nil {
		h.Log.Add(c)
	}
}

// Calls returns the calls of this handler.
func (h *Handler) Calls() []Call { return h.calls.Calls() }

// String implements eventloop.EventHandler.
func (h *Handler) String() string { return h.Name }

// HandlesEvent implements eventloop.EventHandler.
func (h *Handler) HandlesEvent(ev eventloop.Event) bool {
	return h.Handles == nil || h.Handles(ev)
}

// Update implements eventloop.EventHandler.
func (h *Handler) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	h.record("update", ev)
	if h.OnUpdate == nil {
		return "", nil
	}
	return h.OnUpdate(ev, txn)
}

// Resync implements eventloop.EventHandler.
func (h *Handler) Resync(ev eventloop.Event, state any, resyncCount int, txn eventloop.ResyncOperations) error {
	h.record("resync", ev)
	if h.OnResync == nil {
		return nil
	}
	return h.OnResync(ev, state, resyncCount, txn)
}

// Revert implements eventloop.EventHandler.
func (h *Handler) Revert(ev eventloop.Event) error {
	h.record("revert", ev)
	if h.OnRevert == nil {
		return nil
	}
	return h.OnRevert(ev)
}
