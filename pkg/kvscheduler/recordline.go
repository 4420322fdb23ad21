package kvscheduler

import (
	"fmt"
	"strings"
)

// Line formats the record in one line, for Options.TxnLogFormat
// TxnLogLine: its number and kind, the first line of its description,
// how many operations ran (by operation, NOOPs apart), how long it took,
// and its errors and the keys not applied, each error to its first line.
// The full record stays in the history (TxnRecord.String, /scheduler/txn-history).
func (r *TxnRecord) Line() string {
	var b strings.Builder
	kind := r.Type.String()
	if r.Resync != NoResync {
		kind = r.Resync.String() + " resync"
	}
	fmt.Fprintf(&b, "txn #%d (%s)", r.SeqNum, kind)
	if d, _, _ := strings.Cut(r.Description, "\n"); d != "" {
		b.WriteString(" " + d)
	}
	counts := map[Operation]int{}
	var order []Operation
	noop := 0
	for _, op := range r.Executed {
		if op.NOOP {
			noop++
			continue
		}
		if counts[op.Operation] == 0 {
			order = append(order, op.Operation)
		}
		counts[op.Operation]++
	}
	parts := make([]string, 0, len(order)+1)
	for _, op := range order {
		parts = append(parts, fmt.Sprintf("%s %d", op, counts[op]))
	}
	if noop > 0 {
		parts = append(parts, fmt.Sprintf("noop %d", noop))
	}
	if len(parts) == 0 {
		parts = []string{"no operation"}
	}
	fmt.Fprintf(&b, ": %s in %s", strings.Join(parts, ", "), r.Stop.Sub(r.Start))
	if len(r.Errors) > 0 {
		errs := make([]string, len(r.Errors))
		for i, e := range r.Errors {
			errs[i], _, _ = strings.Cut(fmt.Sprint(e), "\n")
		}
		b.WriteString("; errors: " + strings.Join(errs, "; "))
	}
	if len(r.NotApplied) > 0 {
		b.WriteString("; not applied: " + strings.Join(r.NotApplied, ", "))
	}
	return b.String()
}
