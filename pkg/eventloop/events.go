package eventloop

import (
	"fmt"
	"sort"
	"strings"
)

// HealingType tells why a healing resync runs.
type HealingType int

const (
	// Periodic healing runs every Config.PeriodicHealingInterval when enabled.
	Periodic HealingType = iota
	// AfterError healing runs after an event failed.
	AfterError
)

// String names the healing type.
func (t HealingType) String() string {
	if t == Periodic {
		return "Periodic"
	}
	return "AfterError"
}

// HealingResync is the event the loop itself sends to heal: periodic healing
// is a DownstreamResync (handlers are not involved), after-error healing a
// FullResync. A failed after-error healing aborts the loop.
type HealingResync struct {
	Type  HealingType // why the healing runs
	Error error       // the error that made an after-error healing necessary
}

// GetName implements Event.
func (ev *HealingResync) GetName() string { return "Healing Resync" }

// String implements Event.
func (ev *HealingResync) String() string {
	if ev.Type == AfterError {
		return fmt.Sprintf("Healing Resync (after error: %v)", ev.Error)
	}
	return "Healing Resync (periodic)"
}

// Method implements Event.
func (ev *HealingResync) Method() EventMethodType {
	if ev.Type == Periodic {
		return DownstreamResync
	}
	return FullResync
}

// IsBlocking implements Event.
func (ev *HealingResync) IsBlocking() bool { return false }

// Done implements Event.
func (ev *HealingResync) Done(error) {}

// Shutdown is the last event a loop processes (Loop.Stop pushes it): handlers
// get a last chance to add deletes for values that must not outlive the
// operator, then the loop stops. Events still queued behind it fail with
// ErrClosed. Its errors schedule no healing.
type Shutdown struct {
	Result
}

// GetName implements Event.
func (ev *Shutdown) GetName() string { return "Shutdown" }

// String implements Event.
func (ev *Shutdown) String() string { return "Shutdown" }

// Method implements Event.
func (ev *Shutdown) Method() EventMethodType { return Update }

// TransactionType implements UpdateEvent.
func (ev *Shutdown) TransactionType() UpdateTransactionType { return BestEffortIgnoreErrors }

// Direction implements UpdateEvent.
func (ev *Shutdown) Direction() UpdateDirectionType { return Forward }

// IsBlocking implements Event.
func (ev *Shutdown) IsBlocking() bool { return true }

// RequestedResync is the FullResync pushed by POST /controller/resync when no
// Options.OnResyncRequest is set: handlers re-calculate their desired state
// from the input state the loop already has.
type RequestedResync struct{}

// GetName implements Event.
func (ev *RequestedResync) GetName() string { return "Requested Resync" }

// String implements Event.
func (ev *RequestedResync) String() string { return "Requested Resync" }

// Method implements Event.
func (ev *RequestedResync) Method() EventMethodType { return FullResync }

// IsBlocking implements Event.
func (ev *RequestedResync) IsBlocking() bool { return false }

// Done implements Event.
func (ev *RequestedResync) Done(error) {}

// ExternalConfigChange is an update of configuration that comes from outside
// the handlers (an external source such as a file or a CRD owned by another
// team). The loop keeps the latest values of every source; an external value
// of a key overrides the value handlers put (or is merged with it by
// Options.Merge), and removing it restores the handlers' value.
type ExternalConfigChange struct {
	Result
	// Source names the external source.
	Source string
	// Changes maps keys to their new value; a nil value removes the key from
	// the source.
	Changes map[string]any
	// Blocking is returned by IsBlocking.
	Blocking bool
}

// GetName implements Event.
func (ev *ExternalConfigChange) GetName() string { return "External Config Change" }

// String implements Event.
func (ev *ExternalConfigChange) String() string {
	return "External Config Change (source " + ev.Source + ")" + describeKeys(ev.Changes, true)
}

// Method implements Event.
func (ev *ExternalConfigChange) Method() EventMethodType { return Update }

// TransactionType implements UpdateEvent.
func (ev *ExternalConfigChange) TransactionType() UpdateTransactionType { return BestEffort }

// Direction implements UpdateEvent.
func (ev *ExternalConfigChange) Direction() UpdateDirectionType { return Forward }

// IsBlocking implements Event.
func (ev *ExternalConfigChange) IsBlocking() bool { return ev.Blocking }

// ExternalConfigResync replaces the whole configuration of one external
// source (an empty Config removes the source). It is an UpstreamResync:
// handlers re-put their values and the result is merged with every source.
type ExternalConfigResync struct {
	Result
	// Source names the external source.
	Source string
	// Config is the complete configuration of the source.
	Config map[string]any
	// Blocking is returned by IsBlocking.
	Blocking bool
}

// GetName implements Event.
func (ev *ExternalConfigResync) GetName() string { return "External Config Resync" }

// String implements Event.
func (ev *ExternalConfigResync) String() string {
	return "External Config Resync (source " + ev.Source + ")" + describeKeys(ev.Config, false)
}

// Method implements Event.
func (ev *ExternalConfigResync) Method() EventMethodType { return UpstreamResync }

// IsBlocking implements Event.
func (ev *ExternalConfigResync) IsBlocking() bool { return ev.Blocking }

func describeKeys(kvs map[string]any, markRemoved bool) string {
	if len(kvs) == 0 {
		return " - empty"
	}
	keys := make([]string, 0, len(kvs))
	for k := range kvs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("\n* ")
		b.WriteString(k)
		if markRemoved && kvs[k] == nil {
			b.WriteString(" (removed)")
		}
	}
	return b.String()
}
