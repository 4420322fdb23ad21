package eventloop

import (
	"context"
	"sync/atomic"
	"time"
)

// KeyValue is one desired key-value pair of a transaction. A nil Value in an
// update transaction deletes the key.
type KeyValue struct {
	Key   string // identifies the value for the committer
	Value any    // the desired value; nil deletes (in updates)
}

// RetryOptions tell the committer how to retry failed operations
// (Config.EnableRetry and related options).
type RetryOptions struct {
	Enabled     bool          // retry failed operations at all
	Delay       time.Duration // before the first retry
	MaxAttempts int           // retries per failed operation
	ExpBackoff  bool          // double the delay with every attempt
}

// TxnRequest is the transaction of one event, as handed to the Committer.
type TxnRequest struct {
	// SeqNum is the sequence number of the event.
	SeqNum uint64
	// Method is Update for incremental changes, otherwise the kind of resync.
	Method EventMethodType
	// Values are the changes in the order handlers made them. For an update,
	// a nil Value deletes the key. For a FullResync or UpstreamResync, Values
	// is the complete desired state: keys not listed are to be removed. A
	// DownstreamResync has no values: the committer re-applies its last
	// desired state. External configuration is already merged in.
	Values []KeyValue
	// Description names the event and the changes the handlers reported.
	Description string
	// Retry configures retries of failed operations.
	Retry RetryOptions
	// RevertOnFailure asks the committer to undo the applied operations if
	// any fails.
	RevertOnFailure bool
}

// IsResync reports whether the transaction is a resync.
func (r TxnRequest) IsResync() bool { return r.Method.IsResync() }

// Committer applies the transactions of events, once per event, from the
// loop goroutine. A KV scheduler implements it (through loopcommit);
// eventlooptest has a recording implementation for tests.
type Committer interface {
	// Commit applies txn. ctx is cancelled when the loop closes. The
	// summary is what the event history keeps of the transaction: a
	// reference to the committer's own record (its sequence number) and
	// the executed operations without values; the loop cuts it to
	// MaxTxnSummaryBytes and keeps no other reference to what Commit
	// returns, so the committer's record of a resync (every desired value)
	// lives only as long as the committer keeps it. The request's Values
	// may be retained.
	Commit(ctx context.Context, txn TxnRequest) (summary TxnSummary, err error)
}

// CommitterFunc adapts a function to Committer.
type CommitterFunc func(ctx context.Context, txn TxnRequest) (TxnSummary, error)

// Commit calls f.
func (f CommitterFunc) Commit(ctx context.Context, txn TxnRequest) (TxnSummary, error) {
	return f(ctx, txn)
}

// indexThreshold is the size from which a transaction indexes its keys in a
// map; below it a linear scan is cheaper than hashing and allocating.
const indexThreshold = 16

// txn implements UpdateOperations for one event. A fresh txn is made for
// every event, so a handler that keeps it cannot corrupt a later event.
type txn struct {
	loop     *Loop
	ctx      context.Context
	seq      uint64
	ops      []KeyValue
	index    map[string]int
	finished atomic.Bool
}

func (t *txn) find(key string) int {
	if t.index != nil {
		if i, ok := t.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range t.ops {
		if t.ops[i].Key == key {
			return i
		}
	}
	return -1
}

func (t *txn) set(key string, value any) {
	if t.finished.Load() {
		t.loop.log.WithField("key", key).Warn("eventloop: transaction changed after its event was processed; change ignored")
		return
	}
	if i := t.find(key); i >= 0 {
		t.ops[i].Value = value
		return
	}
	t.ops = append(t.ops, KeyValue{Key: key, Value: value})
	if t.index != nil {
		t.index[key] = len(t.ops) - 1
	} else if len(t.ops) > indexThreshold {
		t.index = make(map[string]int, 2*len(t.ops))
		for i, kv := range t.ops {
			t.index[kv.Key] = i
		}
	}
}

// Put implements ResyncOperations.
func (t *txn) Put(key string, value any) { t.set(key, value) }

// Delete implements UpdateOperations.
func (t *txn) Delete(key string) { t.set(key, nil) }

// Get implements ResyncOperations.
func (t *txn) Get(key string) any {
	if i := t.find(key); i >= 0 {
		return t.ops[i].Value
	}
	return nil
}

// Context implements ResyncOperations.
func (t *txn) Context() context.Context { return t.ctx }

// PushFollowUp implements ResyncOperations.
func (t *txn) PushFollowUp(ev Event) error {
	if t.finished.Load() {
		return ErrTxnFinished
	}
	return t.loop.pushFollowUp(t, ev)
}
