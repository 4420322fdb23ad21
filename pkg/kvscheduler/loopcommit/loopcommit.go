// Package loopcommit adapts a KV scheduler to the event loop's Committer
// interface. It is separate so that the scheduler does not depend on the
// event loop.
package loopcommit

import (
	"context"
	"errors"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
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
// revert and description options carry over. The record is the scheduler's
// *kvscheduler.TxnRecord.
func (c *Committer) Commit(ctx context.Context, txn eventloop.TxnRequest) (any, error) {
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
		return nil, fmt.Errorf("loopcommit: unknown event method %v", txn.Method)
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
	if rec == nil {
		// A nil *TxnRecord in an interface would not compare equal to nil.
		return nil, err
	}
	return rec, err
}
