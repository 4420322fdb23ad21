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
	// ErrInvalidDescriptor is wrapped by registration errors.
	ErrInvalidDescriptor = errors.New("kvscheduler: invalid descriptor")
	// ErrAmbiguousKey is the status error of a key claimed by two
	// descriptors' key selectors.
	ErrAmbiguousKey = errors.New("kvscheduler: key claimed by more than one descriptor")
	// ErrPanic is wrapped by the error of a descriptor callback that panicked.
	ErrPanic = errors.New("kvscheduler: descriptor callback panicked")
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

// TransactionError is returned by a blocking Commit when operations failed.
type TransactionError struct {
	// SeqNum is the sequence number of the transaction.
	SeqNum uint64
	// Failed lists every failed operation in the order of execution.
	Failed []KeyError
	// Reverted is true when the transaction was reverted.
	Reverted bool
}

// Error implements error.
func (e *TransactionError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = f.Error()
	}
	rev := ""
	if e.Reverted {
		rev = " (reverted)"
	}
	return fmt.Sprintf("kvscheduler: transaction #%d failed%s: %s", e.SeqNum, rev, strings.Join(parts, "; "))
}

// Unwrap returns the errors of the failed operations.
func (e *TransactionError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i := range e.Failed {
		errs[i] = e.Failed[i]
	}
	return errs
}
