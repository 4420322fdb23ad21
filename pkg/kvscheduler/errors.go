package kvscheduler

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned for misconfiguration and misuse. Test them with errors.Is.
var (
	// ErrClosed is returned by operations on a closed scheduler.
	ErrClosed = errors.New("kvscheduler: scheduler closed")

	// ErrCloseTimeout is wrapped by the error of Close when a descriptor
	// call did not return within Options.CloseTimeout; the error names the
	// call. The scheduler's goroutine is then abandoned where it hangs.
	ErrCloseTimeout = errors.New("kvscheduler: close timed out")

	// ErrInvalidOptions is wrapped by the error of New for Options it
	// cannot run with (a negative duration); the error names the field.
	ErrInvalidOptions = errors.New("kvscheduler: invalid options")

	// ErrInvalidDescriptor is wrapped by registration errors.
	ErrInvalidDescriptor = errors.New("kvscheduler: invalid descriptor")
	// ErrAmbiguousKey is the status error of a key claimed by two
	// descriptors' key selectors.
	ErrAmbiguousKey = errors.New("kvscheduler: key claimed by more than one descriptor")
	// ErrPanic is wrapped by the error of a descriptor callback that
	// panicked, and by Watch.Err when a watch's selector panicked.
	ErrPanic = errors.New("kvscheduler: callback panicked")
	// ErrEmptyKey is returned for a transaction that sets the empty key.
	ErrEmptyKey = errors.New("kvscheduler: empty key")
)

// InvalidValueError is returned by Validate to name the fields that make a
// value invalid; they end up in the value's status.
type InvalidValueError struct {
	Fields []string
	Err    error
}

// NewInvalidValueError builds an InvalidValueError.
func NewInvalidValueError(err error, fields ...string) *InvalidValueError {
	return &InvalidValueError{Fields: fields, Err: err}
}

// Error implements error.
func (e *InvalidValueError) Error() string {
	return fmt.Sprintf("invalid value (fields %s): %v", strings.Join(e.Fields, ", "), e.Err)
}

// Unwrap returns the cause.
func (e *InvalidValueError) Unwrap() error { return e.Err }

// KeyError is the failure of one operation on one key.
type KeyError struct {
	Key       string
	Operation Operation
	Err       error
}

// Error implements error.
func (e KeyError) Error() string { return fmt.Sprintf("%s %s: %v", e.Operation, e.Key, e.Err) }

// Unwrap returns the cause.
func (e KeyError) Unwrap() error { return e.Err }

// RetrieveError is the failure of a descriptor's Retrieve during a refresh.
// While it stands, the scheduler does not know what the southbound holds for
// that descriptor, so it applies none of its values' operations: acting on
// the last known state could delete a value that still exists as wanted or
// create one that is already there.
type RetrieveError struct {
	Descriptor string
	Err        error
}

// Error implements error.
func (e *RetrieveError) Error() string {
	return fmt.Sprintf("retrieve %s: %v", e.Descriptor, e.Err)
}

// Unwrap returns the cause.
func (e *RetrieveError) Unwrap() error { return e.Err }

// TransactionError is returned by a blocking Commit when operations failed,
// when a revert could not undo everything, or when a resync could not read
// the southbound of some descriptor.
type TransactionError struct {
	// SeqNum is the sequence number of the transaction.
	SeqNum uint64
	// Failed lists every failed operation in the order of execution.
	Failed []KeyError
	// Reverted is true when the transaction was reverted completely.
	Reverted bool
	// RevertFailed lists the undo operations of a revert that failed; the
	// transaction was then not (fully) reverted, and those values are left
	// FAILED (or RETRYING) with the retry options of the desired value
	// they were restored to.
	RevertFailed []KeyError
	// Retrieve lists the descriptors whose Retrieve failed during the
	// resync's refresh; none of their values' operations were applied.
	Retrieve []*RetrieveError
	// Invalid lists the values of the transaction (and their derived
	// values) left INVALID, with the validation error. An INVALID value
	// fails a transaction with revert like a failed operation: it is then
	// reverted, and Invalid names the values as the transaction left them
	// before its undo.
	Invalid []KeyError
	// NotApplied lists the keys whose operations did not run because
	// the transaction's context ended first, or its walk was cut (Cut).
	NotApplied []string
	// Canceled is why the transaction's context ended (the error of the
	// Commit's ctx; for a scheduler that closed, context.Canceled wrapping
	// ErrClosed), when it ended before the transaction did. The operation
	// its callback was in then is in Failed, with the callback's error.
	Canceled error
	// Cut is set when a walk of the transaction exceeded its bound (a
	// bug, reported rather than left to spin): the operations it had not
	// run are dropped, their keys in NotApplied, and the next transaction
	// checks them again.
	Cut error
}

// OnlyFailedValues reports whether the transaction's only failures are
// operations of single values, left FAILED or RETRYING where they are: it
// was not reverted, no undo failed, and every descriptor's state could be
// read. A committer may tolerate such failures; any other needs a resync.
func (e *TransactionError) OnlyFailedValues() bool {
	return !e.Reverted && len(e.RevertFailed) == 0 && len(e.Retrieve) == 0 && e.Canceled == nil && e.Cut == nil
}

// Error implements error.
func (e *TransactionError) Error() string {
	var parts []string
	for _, r := range e.Retrieve {
		parts = append(parts, r.Error())
	}
	for _, f := range e.Failed {
		parts = append(parts, f.Error())
	}
	for _, f := range e.Invalid {
		parts = append(parts, "invalid "+f.Key+": "+f.Err.Error())
	}
	switch {
	case e.Canceled != nil && len(e.NotApplied) > 0:
		parts = append(parts, fmt.Sprintf("stopped (%v) before %s", e.Canceled, strings.Join(e.NotApplied, ", ")))
	case e.Canceled != nil:
		parts = append(parts, fmt.Sprintf("stopped (%v)", e.Canceled))
	case e.Cut != nil && len(e.NotApplied) > 0:
		parts = append(parts, fmt.Sprintf("%v, before %s", e.Cut, strings.Join(e.NotApplied, ", ")))
	}
	if e.Cut != nil && (e.Canceled != nil || len(e.NotApplied) == 0) {
		parts = append(parts, e.Cut.Error())
	}
	rev := ""
	switch {
	case e.Reverted:
		rev = " (reverted)"
	case len(e.RevertFailed) > 0:
		undo := make([]string, len(e.RevertFailed))
		for i, f := range e.RevertFailed {
			undo[i] = f.Error()
		}
		rev = " (not fully reverted: undo failed: " + strings.Join(undo, "; ") + ")"
	}
	return fmt.Sprintf("kvscheduler: transaction #%d failed%s: %s", e.SeqNum, rev, strings.Join(parts, "; "))
}

// Unwrap returns the errors of the failed retrieves, operations and undos.
func (e *TransactionError) Unwrap() []error {
	errs := make([]error, 0, len(e.Retrieve)+len(e.Failed)+len(e.RevertFailed))
	for _, r := range e.Retrieve {
		errs = append(errs, r)
	}
	for i := range e.Failed {
		errs = append(errs, e.Failed[i])
	}
	for i := range e.RevertFailed {
		errs = append(errs, e.RevertFailed[i])
	}
	for i := range e.Invalid {
		errs = append(errs, e.Invalid[i])
	}
	if e.Canceled != nil {
		errs = append(errs, e.Canceled)
	}
	if e.Cut != nil {
		errs = append(errs, e.Cut)
	}
	return errs
}

// notDeletedError is the failure of n's delete refused because blocker,
// which still needs n, is in the southbound: the error says how it needs
// n (a derived value derives from its base, anything else depends on it).
func notDeletedError(g *graph, n *node, blocker string) error {
	how := "depends on it"
	if b := g.nodes[blocker]; b != nil && b.base == n.key && b.key != n.key {
		how = "derives from it"
	}
	return fmt.Errorf("kvscheduler: not deleted: %s, which %s, still exists", blocker, how)
}
