package kvscheduler_test

import (
	"maps"
	"slices"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// fzCheckDeleteOrderByTxn is fzCheckDeleteOrderSeen for a fuzz step that
// ran several transactions (retries of different transactions that fell
// due together, then the step's own): the delete order is a rule of one
// transaction, which orders what it takes away; two transactions apply
// in turn, each on what the one before left (adv5 fuzz seed 70373: the
// retry of transaction 5 re-created r/2 while a/3, ordered after r/2,
// stayed; the retry of transaction 7 then deleted a/3 for r/1's
// re-create). The southbound's operations are split by the records'
// executed operations, in order; when they do not line up, the step is
// checked as one.
func fzCheckDeleteOrderByTxn(before map[string]any, ops []kvtest.Op, unseen map[string]any, recs []*kvscheduler.TxnRecord) string {
	segs, ok := fzSplitOpsByTxn(ops, recs)
	if !ok {
		if slices.ContainsFunc(recs, fzReadsAll) {
			unseen = nil // the step as one: the resync read the drift
		}
		return fzCheckDeleteOrderSeen(before, ops, unseen)
	}
	held := maps.Clone(before)
	if held == nil {
		held = map[string]any{}
	}
	unseen = maps.Clone(unseen)
	for i, seg := range segs {
		if fzReadsAll(recs[i]) {
			// The resync reads the drift as it starts: a record before
			// it (a notification's, a retry's) went by what the
			// scheduler knew then (adv5 fuzz seed 2227968).
			clear(unseen)
		}
		if msg := fzCheckDeleteOrderSkip(held, seg, unseen, fzSkipEither(fzRefusedFirst(recs[i]), fzUndoUnforeseen(recs[i]))); msg != "" {
			return msg
		}
		for _, o := range seg {
			if o.Err != nil {
				continue
			}
			switch o.Operation {
			case "create", "update":
				held[o.Key] = o.Value
				delete(unseen, o.Key)
			case "delete":
				delete(held, o.Key)
				delete(unseen, o.Key)
			}
		}
	}
	return ""
}

// fzSplitOpsByTxn splits ops, a step's southbound operations, into those
// of each record in recs: each executed operation that may have reached
// the southbound (not a NOOP, nor a property's) takes the next operation
// when it names the same operation and key and failed, or not, alike (a
// delete the scheduler refused reached nothing). It tells whether every
// operation found its record.
func fzSplitOpsByTxn(ops []kvtest.Op, recs []*kvscheduler.TxnRecord) ([][]kvtest.Op, bool) {
	var segs [][]kvtest.Op
	i := 0
	for _, r := range recs {
		var seg []kvtest.Op
		for _, ro := range r.Executed {
			if ro.NOOP || ro.Property || i >= len(ops) {
				continue
			}
			o := ops[i]
			if o.Key == ro.Key && o.Operation == strings.ToLower(ro.Operation.String()) && (o.Err != nil) == (ro.Err != nil) {
				seg = append(seg, o)
				i++
			}
		}
		segs = append(segs, seg)
	}
	return segs, i == len(ops)
}

// fzRefusedFirst tells, for a transaction's record, whether the later
// delete of a key came after a delete of it that failed or that the
// scheduler refused, attempted before the delete of first: the scheduler
// kept the order, and the value whose delete failed waits for what
// keeps it (a derived value whose failed delete it takes for existing)
// rather than holding back what it is ordered after (docs/kvscheduler.md,
// Order: "A dependent whose own delete was refused ... waits for that
// value, not for the transaction"). Its delete going through later in
// the transaction (the read-back found what kept it gone) is not a
// wrong order (adv5 fuzz seed 10699: b/2 = w@1|~r/1, refused while d/1's
// failed delete left d/1 counted as existing, went after r/1's re-create
// once the read-back found d/1 gone).
func fzRefusedFirst(r *kvscheduler.TxnRecord) func(first, later string) bool {
	return func(first, later string) bool {
		for _, o := range r.Executed {
			switch {
			case o.Operation != kvscheduler.OpDelete:
			case o.Key == later && o.Err != nil:
				return true
			case o.Key == first && o.Err == nil:
				return false
			}
		}
		return false
	}
}

// fzReadsAll tells whether r is a resync that reads the whole southbound
// (full or downstream, not scoped to keys) before it applies anything.
func fzReadsAll(r *kvscheduler.TxnRecord) bool {
	return (r.Resync == kvscheduler.FullResync || r.Resync == kvscheduler.DownstreamResync) && len(r.ResyncKeys) == 0
}
