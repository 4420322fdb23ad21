package dashboard

import (
	"fmt"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// noScheduler stands in for the KV scheduler of an operator that runs
// none (controllers only): the graph is empty, and the other views serve
// what the operator has.
type noScheduler struct{}

func (noScheduler) ValueStatuses(func(string) bool) []kvscheduler.ValueStatus { return nil }

func (noScheduler) GetValueStatus(key string) kvscheduler.ValueStatus {
	return kvscheduler.ValueStatus{Key: key, State: kvscheduler.NonExistent}
}

func (noScheduler) TransactionHistory(_, _ time.Time) []*kvscheduler.TxnRecord { return nil }

func (noScheduler) GraphSnapshotAt(seq uint64) (kvscheduler.GraphSnapshot, error) {
	return kvscheduler.GraphSnapshot{}, fmt.Errorf("transaction %d: %w (the operator runs no KV scheduler)", seq, kvscheduler.ErrOutsideHistory)
}

func (noScheduler) DumpValues(string, string, kvscheduler.View) []kvscheduler.KVWithMetadata {
	return nil
}
