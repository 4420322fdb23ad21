// Package loopcommit adapts a KV scheduler to the event loop's Committer
// interface. It is separate so that the scheduler does not depend on the
// event loop.
package loopcommit

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// Committer commits event-loop transactions into a scheduler.
type Committer struct {
	s    *kvscheduler.Scheduler
	opts Options
}

var _ eventloop.Committer = (*Committer)(nil)

// Options configure a Committer.
type Options struct {
	// FailOnFailedValues makes every failed operation fail the commit, so
	// that the loop starts a healing resync for it (Contiv's behaviour).
	// By default a transaction some of whose operations failed counts as
	// committed, unless it was reverted (or a revert failed) or a resync
	// could not read the southbound. The failures stay visible: as the
	// values' FAILED or RETRYING states, in the record and the event
	// history, and in the scheduler's own retries. Failing the commit for
	// them would start healings that fail the same way and, for values no
	// resync can fix (objects an API server rejects), end the loop.
	FailOnFailedValues bool
}

// New returns a Committer for s with the default options: failed values
// stay on their values and do not fail the commit.
func New(s *kvscheduler.Scheduler) *Committer { return &Committer{s: s} }

// NewWithOptions returns a Committer for s.
func NewWithOptions(s *kvscheduler.Scheduler, opts Options) *Committer {
	return &Committer{s: s, opts: opts}
}

// Commit turns txn into a blocking scheduler transaction: the method
// selects the resync type, values become SetValue calls, and the retry,
// revert and description options carry over. The summary names the
// scheduler's transaction (its sequence number, and where schedulerhttp
// serves its record) and lists the executed operations without values:
// the event history keeps it far longer than the scheduler keeps its
// *kvscheduler.TxnRecord, which holds every value of the transaction. Read
// the full record with Scheduler.GetRecordedTransaction(summary.SeqNum).
func (c *Committer) Commit(ctx context.Context, txn eventloop.TxnRequest) (eventloop.TxnSummary, error) {
	t := c.s.StartNBTransaction().WithDescription(txn.Description)
	switch txn.Method {
	case eventloop.Update:
	case eventloop.FullResync:
		t.WithResync(kvscheduler.FullResync)
	case eventloop.UpstreamResync:
		t.WithResync(kvscheduler.UpstreamResync)
	case eventloop.DownstreamResync:
		t.WithResync(kvscheduler.DownstreamResync)
	default:
		return eventloop.TxnSummary{}, fmt.Errorf("loopcommit: unknown event method %v", txn.Method)
	}
	for _, kv := range txn.Values {
		t.SetValue(kv.Key, kv.Value)
	}
	if txn.RevertOnFailure {
		t.WithRevert()
	}
	if r := txn.Retry; r.Enabled {
		t.WithRetry(kvscheduler.RetryOptions{Period: r.Delay, MaxAttempts: r.MaxAttempts, ExpBackoff: r.ExpBackoff})
	}
	rec, err := t.Commit(ctx)
	var failed *kvscheduler.TransactionError
	if !c.opts.FailOnFailedValues && errors.As(err, &failed) && failed.OnlyFailedValues() {
		err = nil
	}
	return Summarize(rec), err
}

// Summarize returns the summary of a scheduler transaction that the event
// history keeps: its sequence number, a reference to its record in
// schedulerhttp's transaction history, and its executed operations with
// their resulting states and errors, without values. It reads only as many
// operations as eventloop.MaxTxnSummaryBytes can hold, so summarizing a
// resync that executed thousands of operations stays cheap. A nil record
// (a transaction that was not started) gives an empty summary.
func Summarize(rec *kvscheduler.TxnRecord) eventloop.TxnSummary {
	if rec == nil {
		return eventloop.TxnSummary{}
	}
	kind := rec.Type.String()
	if rec.Resync != kvscheduler.NoResync {
		kind = rec.Resync.String() + " resync"
	}
	// Values left waiting (NOOP) changed nothing in the southbound: the
	// summary is about what was done.
	ops := make([]kvscheduler.RecordedOp, 0, len(rec.Executed))
	for _, op := range rec.Executed {
		if !op.NOOP {
			ops = append(ops, op)
		}
	}
	sum := eventloop.TxnSummary{
		SeqNum: rec.SeqNum,
		Ref:    schedulerhttp.TxnHistoryPath + "?seq-num=" + strconv.FormatUint(rec.SeqNum, 10),
		Text:   fmt.Sprintf("%s, %d values requested, %d operations executed", kind, len(rec.Values), len(ops)),
	}
	budget := eventloop.MaxTxnSummaryBytes
	for _, op := range ops {
		if op.Err != nil {
			sum.FailedOps++
		}
		if budget <= 0 {
			sum.OmittedOps++
			continue
		}
		o := eventloop.TxnOp{Operation: op.Operation.String(), Key: op.Key, State: op.NewState.String()}
		if op.Err != nil {
			o.Error = op.Err.Error()
		}
		budget -= len(o.Key) + len(o.Error) + 64
		sum.Ops = append(sum.Ops, o)
	}
	return sum
}
