package kvscheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// TxnType is the kind of a processed transaction.
type TxnType int

// The transaction types.
const (
	// NBTransaction is a transaction committed by the northbound.
	NBTransaction TxnType = iota
	// SBNotification is a change pushed by the southbound.
	SBNotification
	// RetryFailedOps retries failed operations.
	RetryFailedOps
	// DescriptorRegistration applies values that waited for a descriptor.
	DescriptorRegistration
)

var txnTypeNames = [...]string{"NB transaction", "SB notification", "Retry failed operations", "Descriptor registration"}

// String returns the name printed in transaction logs.
func (t TxnType) String() string {
	if t >= 0 && int(t) < len(txnTypeNames) {
		return txnTypeNames[t]
	}
	return fmt.Sprintf("TxnType(%d)", int(t))
}

// RecordedOp is one planned or executed operation.
type RecordedOp struct {
	Operation Operation
	Key       string
	PrevValue any
	NewValue  any
	PrevState ValueState
	NewState  ValueState
	Err       error
	// Recreate marks the delete and create of a re-created value.
	Recreate bool
	// Revert marks operations undoing a failed transaction.
	Revert bool
	// Derived marks operations on derived values.
	Derived bool
	// Property marks derived values without a descriptor: they exist with
	// their base, without operations of their own.
	Property bool
	// NOOP marks operations that changed nothing in the southbound: a
	// value left PENDING, INVALID or UNIMPLEMENTED, an equal value whose
	// state changed, the delete of a value that did not exist.
	NOOP bool
	// Retry marks operations of a retry transaction; Attempt is the
	// number of the attempt (1 for the first retry) and RetryFor the
	// transaction in which the value first failed (for a value retried
	// with a failed one, its derived value or base, those of that one).
	Retry    bool
	Attempt  int
	RetryFor uint64
	// PrevErr is the error the value had before the operation.
	PrevErr error
}

// TxnRecord is the record of one processed transaction. Treat it as
// read-only: it is shared with the history.
type TxnRecord struct {
	SeqNum uint64
	Type   TxnType
	Resync ResyncType
	// ResyncKeys are the keys a scoped downstream resync was limited to
	// (Txn.WithResyncKeys); empty for a resync of everything.
	ResyncKeys  []string
	Description string
	Revert      bool
	Start, Stop time.Time
	// Values are the requested changes (or the notified value), as in the
	// reference's record: a retry's are the requests it applies again, and
	// so are those a transaction resumes for one its context stopped; a
	// full or upstream resync's are followed by the deletes it adds for
	// the values it no longer requests, then by the values obtained from
	// the southbound it keeps (the last Obtained of Values, which nobody
	// requested).
	Values []KeyValuePair
	// Obtained counts the values obtained from the southbound at the end
	// of Values (see Values).
	Obtained int
	// RetryOf lists the transactions whose failures this one retries.
	RetryOf []uint64
	// Executed are the operations actually executed, in order.
	Executed []RecordedOp
	// Errors are refresh errors and failed operations.
	Errors []error
	// NotApplied are the keys whose operations did not run because the
	// transaction's context ended: that of its Commit, or the scheduler's
	// when it closed.
	NotApplied []string

	// changes are the statuses this transaction changed, with those they
	// replaced, so that past graphs can be rebuilt (see GraphSnapshot).
	changes []statusChange
}

// statusChange is the status of one key before and after a transaction;
// nil means the key was unknown.
type statusChange struct {
	key           string
	before, after *ValueStatus
}

// String formats the record like the VPP-Agent's transaction log. It is
// only called when the record is printed, so the text costs nothing
// otherwise.
func (r *TxnRecord) String() string {
	var b strings.Builder
	r.writeHeader(&b)
	b.WriteString("o" + strings.Repeat("-", 118) + "o\n")
	fmt.Fprintf(&b, "  * executed operations (%s - %s, duration = %s):\n", r.Start, r.Stop, r.Stop.Sub(r.Start))
	writeOpList(&b, r.Executed)
	if len(r.Errors) > 0 {
		b.WriteString("  * errors:\n")
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "      - %v\n", e)
		}
	}
	b.WriteString("x" + strings.Repeat("#", 118) + "x\n")
	return b.String()
}

func (r *TxnRecord) writeHeader(b *strings.Builder) {
	line := "+" + strings.Repeat("=", 118) + "+\n"
	b.WriteString(line)
	title := fmt.Sprintf("Transaction #%d", r.SeqNum)
	kind := r.Type.String()
	if r.Resync != NoResync {
		kind = r.Resync.String() + " resync"
	}
	fmt.Fprintf(b, "| %s%s%s |\n", title, strings.Repeat(" ", max(1, 116-len(title)-len(kind))), kind)
	b.WriteString(line)
	b.WriteString("  * transaction arguments:\n")
	fmt.Fprintf(b, "      - seq-num: %d\n      - type: %s\n", r.SeqNum, kind)
	if r.Description != "" {
		fmt.Fprintf(b, "      - Description: %s\n", r.Description)
	}
	if len(r.ResyncKeys) > 0 {
		fmt.Fprintf(b, "      - resync keys: %s\n", strings.Join(r.ResyncKeys, ", "))
	}
	if r.Revert {
		b.WriteString("      - revert: on\n")
	}
	if len(r.RetryOf) > 0 {
		fmt.Fprintf(b, "      - retrying: %v\n", r.RetryOf)
	}
	if len(r.Values) > 0 {
		b.WriteString("      - values:\n")
		for _, kv := range r.Values {
			fmt.Fprintf(b, "          - key: %s\n            value: %s\n", kv.Key, fmtValue(kv.Value))
		}
	}
}

func writeOpList(b *strings.Builder, ops []RecordedOp) {
	if len(ops) == 0 {
		b.WriteString("      <none>\n")
	}
	for i, op := range ops {
		var flags []string
		if op.Recreate {
			flags = append(flags, "RECREATE")
		}
		if op.Revert {
			flags = append(flags, "REVERT")
		}
		if op.Derived {
			flags = append(flags, "DERIVED")
		}
		if op.Property {
			flags = append(flags, "PROPERTY")
		}
		if op.NOOP {
			flags = append(flags, "NOOP")
		}
		if op.Retry {
			flags = append(flags, fmt.Sprintf("RETRY #%d of txn %d", op.Attempt, op.RetryFor))
		}
		fl := ""
		if len(flags) > 0 {
			fl = " [" + strings.Join(flags, " ") + "]"
		}
		fmt.Fprintf(b, "      %d. %s%s:\n          - key: %s\n", i+1, op.Operation, fl, op.Key)
		switch op.Operation {
		case OpUpdate:
			fmt.Fprintf(b, "          - prev-value: %s\n          - new-value: %s\n", fmtValue(op.PrevValue), fmtValue(op.NewValue))
		case OpDelete:
			fmt.Fprintf(b, "          - value: %s\n", fmtValue(op.PrevValue))
		default:
			fmt.Fprintf(b, "          - value: %s\n", fmtValue(op.NewValue))
		}
		if op.PrevState != op.NewState {
			fmt.Fprintf(b, "          - state: %s -> %s\n", op.PrevState, op.NewState)
		}
		if op.PrevErr != nil {
			fmt.Fprintf(b, "          - prev-error: %v\n", op.PrevErr)
		}
		if op.Err != nil {
			fmt.Fprintf(b, "          - error: %v\n", op.Err)
		}
	}
}

func fmtValue(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{ %+v }", v)
}

// notApplied names k among the keys not applied, once, in the order first
// reached: a stopped walk can reach a key twice (a base taken down by a
// cascade and again as a request of its own), and the record and the
// error name each key the stop left once.
func (r *TxnRecord) notApplied(k string) {
	if !slices.Contains(r.NotApplied, k) {
		r.NotApplied = append(r.NotApplied, k)
	}
}

// resumed names among the record's values a request applied again for a
// stopped transaction (as a retry's record names its own): before the
// values obtained, which stay last.
func (r *TxnRecord) resumed(kv KeyValuePair) {
	at := len(r.Values) - r.Obtained
	r.Values = slices.Insert(r.Values, at, kv)
}
