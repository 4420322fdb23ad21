package eventloop

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxTxnSummaryBytes bounds what the event history keeps of one committed
// transaction: the bytes of a TxnSummary's strings plus txnOpOverhead per
// operation. The loop cuts every summary a Committer returns to it, so the
// event history's memory does not depend on the size of the transactions:
// a resync of a big operator carries every desired object, and the history
// keeps records far longer than a committer keeps its own (the KV
// scheduler's history is bounded by its own options).
const MaxTxnSummaryBytes = 2048

// Bounds of single strings of a summary, so that one long error message
// does not crowd out every operation.
const (
	maxSummaryText  = 512 // TxnSummary.Text and Ref, TxnOp.Error
	maxSummaryKey   = 512 // TxnOp.Key
	maxSummaryShort = 64  // TxnOp.Operation and State
	txnOpOverhead   = 64  // the TxnOp struct itself (four string headers)
)

// TxnSummary is what the event history keeps of a committed transaction: a
// reference to the committer's full record and a short account of what was
// executed, without values. The full record (with every requested value)
// stays with the committer, which bounds its own history: the event history
// would otherwise keep every resync's desired objects for as long as it
// keeps events (by default 10,000 events or 24 hours).
type TxnSummary struct {
	// SeqNum is the committer's own number of the transaction (the KV
	// scheduler's transaction sequence number with loopcommit, from 0), by
	// which the full record can be read from the committer while it keeps
	// it. A committer that numbers none leaves it 0 and Ref empty.
	SeqNum uint64 `json:"seqNum,omitempty"`
	// Ref says where the full record can be read, e.g.
	// "/scheduler/txn-history?seq-num=12".
	Ref string `json:"ref,omitempty"`
	// Text is a short free-form description (cut to 512 bytes).
	Text string `json:"text,omitempty"`
	// Ops are the executed operations in order, as many as fit in
	// MaxTxnSummaryBytes.
	Ops []TxnOp `json:"ops,omitempty"`
	// OmittedOps counts the executed operations left out of Ops.
	OmittedOps int `json:"omittedOps,omitempty"`
	// FailedOps counts the failed operations, omitted ones included.
	FailedOps int `json:"failedOps,omitempty"`
}

// TxnOp is one executed operation of a TxnSummary, without its values.
type TxnOp struct {
	Operation string `json:"operation"`       // e.g. CREATE, UPDATE, DELETE
	Key       string `json:"key"`             // the value's key
	State     string `json:"state,omitempty"` // the value's state after it, e.g. CONFIGURED, PENDING, FAILED
	Error     string `json:"error,omitempty"` // why it failed; "" on success
}

// String formats the summary on one line per operation, for logs and
// printouts; the full record is the committer's.
func (s *TxnSummary) String() string {
	var b strings.Builder
	if s.SeqNum != 0 || s.Ref != "" {
		fmt.Fprintf(&b, "transaction #%d", s.SeqNum)
	} else {
		b.WriteString("transaction")
	}
	if s.Text != "" {
		b.WriteString(": " + s.Text)
	}
	for _, op := range s.Ops {
		fmt.Fprintf(&b, "\n- %s %s", op.Operation, op.Key)
		if op.Error != "" {
			fmt.Fprintf(&b, " FAILED: %s", op.Error)
		} else if op.State != "" {
			fmt.Fprintf(&b, " (%s)", op.State)
		}
	}
	if s.OmittedOps > 0 {
		fmt.Fprintf(&b, "\n- and %d more operations", s.OmittedOps)
	}
	if s.FailedOps > 0 {
		fmt.Fprintf(&b, "\n%d failed", s.FailedOps)
	}
	if s.Ref != "" {
		b.WriteString("\nfull record: " + s.Ref)
	}
	return b.String()
}

// bounded returns a copy of s that shares no memory with it and takes at
// most MaxTxnSummaryBytes: strings are copied (a short string may be part of
// a large one, which it would keep alive) and cut, and the operations that
// do not fit are counted in OmittedOps.
func (s TxnSummary) bounded() *TxnSummary {
	out := &TxnSummary{
		SeqNum:     s.SeqNum,
		Ref:        cut(s.Ref, maxSummaryText),
		Text:       cut(s.Text, maxSummaryText),
		OmittedOps: max(s.OmittedOps, 0),
		FailedOps:  max(s.FailedOps, 0),
	}
	budget := MaxTxnSummaryBytes - len(out.Ref) - len(out.Text)
	n := 0
	for _, op := range s.Ops {
		cost := txnOpOverhead + min(len(op.Operation), maxSummaryShort) + min(len(op.Key), maxSummaryKey) +
			min(len(op.State), maxSummaryShort) + min(len(op.Error), maxSummaryText)
		if cost > budget {
			break
		}
		budget -= cost
		n++
	}
	if n > 0 {
		out.Ops = make([]TxnOp, n)
		for i, op := range s.Ops[:n] {
			out.Ops[i] = TxnOp{
				Operation: cut(op.Operation, maxSummaryShort),
				Key:       cut(op.Key, maxSummaryKey),
				State:     cut(op.State, maxSummaryShort),
				Error:     cut(op.Error, maxSummaryText),
			}
		}
	}
	out.OmittedOps += len(s.Ops) - n
	return out
}

// cut returns a copy of s of at most n bytes, cut at a rune boundary and
// ending in "…" when shortened.
func cut(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	const ellipsis = "…"
	i := n - len(ellipsis)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + ellipsis
}
