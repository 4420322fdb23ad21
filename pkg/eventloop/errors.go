package eventloop

import (
	"errors"
	"fmt"
)

var (
	// ErrQueueFull is returned by PushEvent when the bounded event queue (or
	// the follow-up queue) has no room.
	ErrQueueFull = errors.New("eventloop: event queue is full")

	// ErrClosed is returned by PushEvent after Close or after a Shutdown event
	// was accepted, and passed to Done of events that were still queued when
	// the loop stopped.
	ErrClosed = errors.New("eventloop: loop closed")

	// ErrAborted is wrapped by the errors of every event after the loop
	// aborted (a FatalError, a failed after-error healing, or a missed startup
	// resync deadline). errors.Is also finds the cause.
	ErrAborted = errors.New("eventloop: loop aborted")

	// ErrStartupResyncDeadline is the cause of an abort when no startup resync
	// arrived within Config.StartupResyncDeadline.
	ErrStartupResyncDeadline = errors.New("eventloop: startup resync deadline exceeded")

	// ErrWaitInLoop is returned by Result.Wait when called from inside the
	// loop, where waiting would deadlock.
	ErrWaitInLoop = errors.New("eventloop: waiting for an event from inside the event loop would deadlock")

	// ErrTxnFinished is returned by PushFollowUp on a transaction whose event
	// has already been processed (a handler kept the transaction too long).
	ErrTxnFinished = errors.New("eventloop: transaction used after its event was processed")

	// ErrInvalidEvent is returned by PushEvent for an event the loop cannot
	// process: nil, an unknown method, or an Update event that does not
	// implement UpdateEvent.
	ErrInvalidEvent = errors.New("eventloop: invalid event")

	// ErrAlreadyStarted is returned by Start when called twice.
	ErrAlreadyStarted = errors.New("eventloop: already started")
)

// FatalError wraps a handler error that must stop the whole loop: it aborts,
// reports itself unhealthy (so that the process can be restarted), and fails
// every later event.
type FatalError struct {
	Err error // the cause
}

// NewFatalError wraps err as a FatalError.
func NewFatalError(err error) error { return &FatalError{Err: err} }

// Error describes the error.
func (e *FatalError) Error() string {
	if e.Err == nil {
		return "fatal error"
	}
	return "fatal error: " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *FatalError) Unwrap() error { return e.Err }

// AbortEventError wraps a handler error that must stop the processing of the
// event: later handlers are not called, nothing is committed (RevertOnFailure
// events are reverted), and a healing resync is scheduled.
type AbortEventError struct {
	Err error // the cause
}

// NewAbortEventError wraps err as an AbortEventError.
func NewAbortEventError(err error) error { return &AbortEventError{Err: err} }

// Error describes the error.
func (e *AbortEventError) Error() string {
	if e.Err == nil {
		return "event processing aborted"
	}
	return "event processing aborted: " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *AbortEventError) Unwrap() error { return e.Err }

// HandlerError is the error of one handler call, as passed to Event.Done
// (joined with the others when several handlers failed).
type HandlerError struct {
	Handler string // EventHandler.String of the failed handler
	Revert  bool   // the error came from Revert, not from Update or Resync
	Err     error  // what the handler returned
}

// Error describes the error.
func (e *HandlerError) Error() string {
	if e.Revert {
		return "handler " + e.Handler + " (revert): " + errString(e.Err)
	}
	return "handler " + e.Handler + ": " + errString(e.Err)
}

// Unwrap returns the handler's error.
func (e *HandlerError) Unwrap() error { return e.Err }

// PanicError is the error of a handler (or committer, or merge function) that
// panicked; the loop recovers and treats it as an ordinary error of that call.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the stack of the panicking goroutine
}

// Error describes the panic.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// CommitError wraps the error returned by the Committer.
type CommitError struct {
	Err error // what the committer returned
}

// Error describes the error.
func (e *CommitError) Error() string { return "commit: " + errString(e.Err) }

// Unwrap returns the committer's error.
func (e *CommitError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func isFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}

func isAbort(err error) bool {
	var a *AbortEventError
	return errors.As(err, &a)
}
