// Package loopcommit adapts a KV scheduler to the event loop's Committer
// interface. It is separate so that the scheduler does not depend on the
// event loop.
package loopcommit

import (
	"context"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Committer commits event-loop transactions into a scheduler.
type Committer struct {
	s *kvscheduler.Scheduler
}

var _ eventloop.Committer = (*Committer)(nil)

// New returns a Committer for s.
func New(s *kvscheduler.Scheduler) *Committer { return &Committer{s: s} }

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
	if rec == nil {
		// A nil *TxnRecord in an interface would not compare equal to nil.
		return nil, err
	}
	return rec, err
}
