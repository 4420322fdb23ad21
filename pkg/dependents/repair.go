package dependents

import (
	"context"
	"errors"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// repair is the follow-up event the loop handler pushes when an object the
// scheduler holds as created was deleted behind its back: handling it, the
// handler asks the scheduler for a downstream resync scoped to that key,
// which reads the object back (absent) and creates it again. Only
// deletions are repaired at once; other drift waits for the periodic
// healing (DefaultEventLoopConfig).
type repair struct {
	key    string
	reason string // "deleted" or "changed"
}

var _ eventloop.UpdateEvent = (*repair)(nil)

// GetName implements eventloop.Event.
func (r *repair) GetName() string { return "Repair" }

// String implements eventloop.Event.
func (r *repair) String() string { return "Repair (" + r.key + " " + r.reason + ")" }

// Method implements eventloop.Event.
func (r *repair) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (r *repair) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (r *repair) Done(error) {}

// TransactionType implements eventloop.UpdateEvent.
func (r *repair) TransactionType() eventloop.UpdateTransactionType { return eventloop.BestEffort }

// Direction implements eventloop.UpdateEvent.
func (r *repair) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

// runRepair re-reads and re-applies the object at key. A value that fails
// again keeps its retries; only a failure to read is the loop's error.
func runRepair(ctx context.Context, s *kvscheduler.Scheduler, key string) (string, error) {
	rec, err := s.StartNBTransaction().WithDescription("repair " + key).
		WithResync(kvscheduler.DownstreamResync).WithResyncKeys(key).Commit(ctx)
	var failed *kvscheduler.TransactionError
	if errors.As(err, &failed) && failed.OnlyFailedValues() || ctx.Err() != nil {
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("repairing %s: %w", key, err)
	}
	seq := uint64(0)
	if rec != nil {
		seq = rec.SeqNum
	}
	return fmt.Sprintf("repaired %s (scheduler transaction %d)", key, seq), nil
}
