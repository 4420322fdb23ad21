package schedulerhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/lariat-dev/lariat/internal/httpjson"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TxnJSON is the JSON form of a kvscheduler.TxnRecord. The record itself
// does not marshal usefully: its errors would become empty objects and its
// enums numbers.
type TxnJSON struct {
	SeqNum      uint64    `json:"seqNum"`
	TxnType     string    `json:"txnType"`
	ResyncType  string    `json:"resyncType,omitempty"`
	Description string    `json:"description,omitempty"`
	Revert      bool      `json:"revert,omitempty"`
	Start       time.Time `json:"start"`
	Stop        time.Time `json:"stop"`
	Values      []KVJSON  `json:"values,omitempty"`
	RetryOf     []uint64  `json:"retryOf,omitempty"`
	Executed    []OpJSON  `json:"executed"`
	Errors      []string  `json:"errors,omitempty"`
}

// GraphSnapshotJSON is the JSON form of a kvscheduler.GraphSnapshot: the
// statuses of all values right after transaction SeqNum, which finished at
// Time.
type GraphSnapshotJSON struct {
	SeqNum uint64       `json:"seqNum"`
	Time   time.Time    `json:"time"`
	Values []StatusJSON `json:"values"`
}

// KVJSON is a key with its value; a nil value means a delete request.
type KVJSON struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// OpJSON is the JSON form of a kvscheduler.RecordedOp.
type OpJSON struct {
	Operation string `json:"operation,omitempty"`
	Key       string `json:"key,omitempty"`
	PrevValue any    `json:"prevValue,omitempty"`
	NewValue  any    `json:"newValue,omitempty"`
	PrevState string `json:"prevState,omitempty"`
	NewState  string `json:"newState,omitempty"`
	Error     string `json:"error,omitempty"`
	Recreate  bool   `json:"recreate,omitempty"`
	Revert    bool   `json:"revert,omitempty"`
	Derived   bool   `json:"derived,omitempty"`
	// Property, NOOP, Retry, Attempt, RetryFor and PrevError are those of
	// kvscheduler.RecordedOp.
	Property  bool   `json:"property,omitempty"`
	NOOP      bool   `json:"noop,omitempty"`
	Retry     bool   `json:"retry,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	RetryFor  uint64 `json:"retryFor,omitempty"`
	PrevError string `json:"prevError,omitempty"`
}

// StatusJSON is the JSON form of a kvscheduler.ValueStatus. WaitingFor is
// only filled for PENDING values: it explains what the value waits for.
type StatusJSON struct {
	Key               string   `json:"key"`
	State             string   `json:"state"`
	LastOp            string   `json:"lastOp,omitempty"`
	Error             string   `json:"error,omitempty"`
	UnmetDependencies []string `json:"unmetDependencies,omitempty"`
	InvalidFields     []string `json:"invalidFields,omitempty"`
	Descriptor        string   `json:"descriptor,omitempty"`
	Derived           bool     `json:"derived,omitempty"`
	// BaseKey is the value a derived value is derived from.
	BaseKey string `json:"baseKey,omitempty"`
	// Dependencies are all declared dependencies, met or not.
	Dependencies []DependencyStatusJSON `json:"dependencies,omitempty"`
	WaitingFor   []DependencyJSON       `json:"waitingFor,omitempty"`
}

// DependencyStatusJSON is the JSON form of a kvscheduler.DependencyStatus:
// one dependency of a value, the keys that satisfy it (or would) and
// whether it is met.
type DependencyStatusJSON struct {
	Label string   `json:"label"`
	Key   string   `json:"key,omitempty"`
	Keys  []string `json:"keys,omitempty"`
	Met   bool     `json:"met"`
	// Kind is "requires" or "ordering-only" (kvscheduler.DependencyKind).
	Kind string `json:"kind"`
}

// DependencyJSON is one unmet dependency of a PENDING value with the state
// of what would satisfy it.
//
// Dependency is the name the scheduler gives the dependency: its label,
// else its key, else "any-of" followed by its prefixes joined with "|".
// The status's dependency list resolves it to a key or to the candidates
// of an any-of dependency; the dependency of a derived value on its base,
// which the list leaves out, is named by the base's key.
type DependencyJSON struct {
	// Dependency is the name reported by the scheduler.
	Dependency string `json:"dependency"`
	// Key is the required key, for a dependency on one key.
	Key string `json:"key,omitempty"`
	// State is the state of Key.
	State string `json:"state,omitempty"`
	// Error is Key's error, e.g. why it failed to be created.
	Error string `json:"error,omitempty"`
	// UnmetDependencies are Key's own unmet dependencies, when it is
	// PENDING too: the next link of the chain.
	UnmetDependencies []string `json:"unmetDependencies,omitempty"`
	// AnyOfPrefixes are the prefixes of an unlabeled any-of dependency.
	AnyOfPrefixes []string `json:"anyOfPrefixes,omitempty"`
	// Candidates are the values matching an any-of dependency; none of them
	// can be created yet, or the dependency would be met.
	Candidates []KeyStateJSON `json:"candidates,omitempty"`
}

// KeyStateJSON is a key with its state.
type KeyStateJSON struct {
	Key   string `json:"key"`
	State string `json:"state"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func errStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, errString(e))
	}
	return out
}

// jsonValue returns v in a form that always marshals: values are opaque to
// the scheduler and may hold channels, functions or a MarshalJSON that
// fails or panics; those are shown as formatted by fmt instead of failing
// the whole response.
func jsonValue(v any) (out any) {
	if v == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = fmt.Sprintf("%+v", v)
		}
	}()
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return json.RawMessage(b)
}

func encodeOps(ops []kvscheduler.RecordedOp) []OpJSON {
	out := make([]OpJSON, 0, len(ops))
	for _, o := range ops {
		out = append(out, encodeOp(o))
	}
	return out
}

func encodeOp(o kvscheduler.RecordedOp) OpJSON {
	return OpJSON{
		Operation: o.Operation.String(), Key: o.Key,
		PrevValue: jsonValue(o.PrevValue), NewValue: jsonValue(o.NewValue),
		PrevState: o.PrevState.String(), NewState: o.NewState.String(),
		Error: errString(o.Err), Recreate: o.Recreate, Revert: o.Revert, Derived: o.Derived,
		Property: o.Property, NOOP: o.NOOP, Retry: o.Retry, Attempt: o.Attempt, RetryFor: o.RetryFor,
		PrevError: errString(o.PrevErr),
	}
}

func encodeTxn(r *kvscheduler.TxnRecord) TxnJSON {
	t := TxnJSON{
		SeqNum: r.SeqNum, TxnType: r.Type.String(), Description: r.Description, Revert: r.Revert,
		Start: r.Start, Stop: r.Stop, RetryOf: r.RetryOf,
		Executed: encodeOps(r.Executed), Errors: errStrings(r.Errors),
	}
	if r.Resync != kvscheduler.NoResync {
		t.ResyncType = r.Resync.String()
	}
	for _, kv := range r.Values {
		t.Values = append(t.Values, KVJSON{Key: kv.Key, Value: jsonValue(kv.Value)})
	}
	return t
}

func encodeStatus(st kvscheduler.ValueStatus) StatusJSON {
	out := StatusJSON{
		Key: st.Key, State: st.State.String(), Error: errString(st.Error),
		UnmetDependencies: st.UnmetDependencies, InvalidFields: st.InvalidFields,
		Descriptor: st.Descriptor, Derived: st.Derived, BaseKey: st.BaseKey,
	}
	for _, d := range st.Dependencies {
		out.Dependencies = append(out.Dependencies, DependencyStatusJSON{Label: d.Label, Key: d.Key, Keys: d.Keys, Met: d.Met, Kind: d.Kind.String()})
	}
	if st.LastOp != kvscheduler.OpNone {
		out.LastOp = st.LastOp.String()
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func writeError(w http.ResponseWriter, status int, err error) { httpjson.Error(w, status, err) }
