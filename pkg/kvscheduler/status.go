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
	// Failed: the last operation failed and will not be retried.
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
	// LastOp is the last operation executed on the value.
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
}

func (s ValueStatus) equal(o ValueStatus) bool {
	if s.Key != o.Key || s.State != o.State || s.LastOp != o.LastOp || s.Descriptor != o.Descriptor ||
		s.Derived != o.Derived || fmt.Sprint(s.Error) != fmt.Sprint(o.Error) {
		return false
	}
	return fmt.Sprint(s.UnmetDependencies, s.InvalidFields) == fmt.Sprint(o.UnmetDependencies, o.InvalidFields)
}
