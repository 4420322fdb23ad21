package kvscheduler

import "fmt"

// ValueState is the operational state of one value.
type ValueState int

// The value states, as in the VPP-Agent.
const (
	// NonExistent: the scheduler knows nothing about the key.
	NonExistent ValueState = iota
	// Missing: the value is configured according to the scheduler, but a
	// refresh did not find it in the southbound; it is about to be re-created.
	Missing
	// Unimplemented: no descriptor handles the key (yet).
	Unimplemented
	// Removed: the value has just been removed; sent to watchers only.
	Removed
	// Configured: the value requested by the northbound is applied.
	Configured
	// Obtained: the value was created by the southbound itself and is left
	// alone by the scheduler.
	Obtained
	// Discovered: a refresh found a value of a northbound-managed type that
	// the northbound did not request.
	Discovered
	// Pending: the value waits for unmet dependencies.
	Pending
	// Invalid: the descriptor rejected the value in Validate.
	Invalid
	// Failed: the last operation failed and no retry is scheduled: retries
	// are disabled or ran out, the error is not retriable, or the value
	// failed in a transaction with revert. The value is attempted again
	// when it is requested with a different value, by a resync, and, for
	// a delete that failed because a value depending on it still exists,
	// as soon as that value is gone.
	Failed
	// Retrying: the last operation failed and a retry is scheduled.
	Retrying
)

var stateNames = [...]string{"NONEXISTENT", "MISSING", "UNIMPLEMENTED", "REMOVED", "CONFIGURED",
	"OBTAINED", "DISCOVERED", "PENDING", "INVALID", "FAILED", "RETRYING"}

// String returns the upper-case name used by the VPP-Agent.
func (s ValueState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("ValueState(%d)", int(s))
}

// Operation is a CRUD operation executed (or planned) on a value.
type Operation int

// The operations.
const (
	// OpNone: nothing was executed yet.
	OpNone Operation = iota
	// OpCreate creates a value.
	OpCreate
	// OpUpdate changes an existing value in place.
	OpUpdate
	// OpDelete removes a value.
	OpDelete
)

var opNames = [...]string{"NONE", "CREATE", "UPDATE", "DELETE"}

// String returns the upper-case name of the operation.
func (o Operation) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Operation(%d)", int(o))
}

// ValueStatus is the state of one value with the details that explain it.
type ValueStatus struct {
	Key   string
	State ValueState
	// LastOp is the operation chosen when the value was last applied, as
	// the reference reports it: CREATE for a value the southbound did not
	// hold (even one left PENDING), UPDATE for one it held (even when equal,
	// updated by re-creation, or deleted into PENDING for its new value's
	// dependencies), DELETE for a delete; for a failed value,
	// the operation that failed; OpNone for a value obtained from the
	// southbound.
	LastOp Operation
	// Error is the error of the last operation, or the validation error.
	Error error
	// UnmetDependencies lists the dependencies (by label) that keep a
	// PENDING value from being created: this answers "why is it pending".
	UnmetDependencies []string
	// InvalidFields lists the fields an INVALID value was rejected for.
	InvalidFields []string
	// Descriptor names the descriptor handling the value, if any.
	Descriptor string
	// Derived is true for values derived from another value.
	Derived bool
	// BaseKey is the key of the value this one is derived from, when
	// Derived is set and the base is known, so that tools can link a
	// derived value to its base without re-running DerivedValues.
	BaseKey string
	// Dependencies lists every dependency the descriptor declares for the
	// value, met or not, in declaration order, so that the whole dependency
	// graph can be drawn and not only what blocks PENDING values. It is
	// only known for values whose dependencies the scheduler checks: nil
	// for values kept as they are (obtained from the southbound, blocked
	// after a failure) and for values rejected before the check. The
	// implicit dependency of a derived value on its base is not listed
	// here (see BaseKey), although UnmetDependencies names it.
	Dependencies []DependencyStatus
}

// DependencyStatus is one dependency of a value with what satisfies it.
type DependencyStatus struct {
	// Label is the name of the dependency, as used in UnmetDependencies:
	// its label, else its key, else "any-of" and its prefixes.
	Label string
	// Key is the required key of a dependency on one key; empty for an
	// any-of dependency.
	Key string
	// Keys are the keys that satisfy the dependency or would: Key for a
	// dependency on one key (whether or not it exists); for an any-of
	// dependency, the matching values that exist or are about to (when it
	// is met), or the matching values that wait themselves (when it is
	// unmet: they would satisfy it once they can be created). Sorted.
	Keys []string
	// Met tells whether the dependency is satisfied now.
	Met bool
	// Kind is the dependency's kind: Requires or OrderingOnly.
	Kind DependencyKind
}

func (s ValueStatus) equal(o ValueStatus) bool {
	if s.Key != o.Key || s.State != o.State || s.LastOp != o.LastOp || s.Descriptor != o.Descriptor ||
		s.Derived != o.Derived || s.BaseKey != o.BaseKey || !sameError(s.Error, o.Error) {
		return false
	}
	// Watchers are told when a dependency becomes met or unmet, not only
	// when a value changes state.
	return fmt.Sprint(s.UnmetDependencies, s.InvalidFields, s.Dependencies) ==
		fmt.Sprint(o.UnmetDependencies, o.InvalidFields, o.Dependencies)
}

// sameError compares errors by message; it runs for every value of every
// transaction, so the common case, no error, must not format anything.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
