package kvscheduler

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ResyncType selects how a transaction reconciles with the southbound.
type ResyncType int

const (
	// NoResync applies the transaction's values as changes.
	NoResync ResyncType = iota
	// FullResync refreshes the southbound view (Retrieve), replaces the
	// whole desired state with the transaction's values and converges.
	FullResync
	// UpstreamResync replaces the desired state without a refresh.
	UpstreamResync
	// DownstreamResync ignores the values: it refreshes and re-applies the
	// last desired state, repairing drift.
	DownstreamResync
)

var resyncNames = [...]string{"none", "Full", "Upstream", "Downstream"}

// String returns the name of the resync type.
func (r ResyncType) String() string {
	if r >= 0 && int(r) < len(resyncNames) {
		return resyncNames[r]
	}
	return fmt.Sprintf("ResyncType(%d)", int(r))
}

// RetryOptions configure retries of the failed operations of values set by
// a transaction.
//
// Attempts are counted per value, as failures in a row: the count starts
// over when the value is applied successfully or requested with a
// different value. Unlike the reference, a resync that attempts a failed
// value again (and fails) goes on counting rather than starting over, so
// MaxAttempts and the backoff also bound values every resync fails again.
// The failed values of one transaction whose retries are due together
// (same delay) are retried in one RetryFailedOps transaction, whatever
// transaction they first failed in (TxnRecord.RetryOf lists those); the
// reference groups them by original transaction too. Values that fail in
// a transaction with revert (outside its undo) are not retried.
type RetryOptions struct {
	Enabled bool
	// Period is the delay before the first retry; 0 or a negative period
	// means the default, one second.
	Period time.Duration
	// MaxAttempts is the number of retries; 0 or a negative number means
	// unlimited (to retry nothing, leave Enabled false: do not call
	// WithRetry).
	MaxAttempts int
	// ExpBackoff doubles the delay with every attempt, up to about an hour
	// (the doubling stops once the delay reaches an hour).
	ExpBackoff bool
}

func (o RetryOptions) delay(attempt int) time.Duration {
	d := o.Period
	if d <= 0 {
		d = time.Second
	}
	if o.ExpBackoff {
		for i := 1; i < attempt && d < time.Hour; i++ {
			d *= 2
		}
	}
	return d
}

// Txn is a transaction under construction; it is not safe for concurrent
// use and must not be changed after Commit. Later SetValue calls for the
// same key win.
type Txn struct {
	s      *Scheduler
	values []KeyValuePair
	// index finds a key's value among values, for a key set again. It is
	// built only once the keys stop coming in order: while each key is
	// greater (or each smaller) than the one before, none can be set
	// again but the last, and a batch built from a sorted list costs no
	// map. dir is that order: 1 ascending, -1 descending.
	index       map[string]int
	dir         int
	description string
	resync      ResyncType
	resyncKeys  []string
	revert      bool
	retry       RetryOptions
	nonBlocking bool
}

// StartNBTransaction starts a northbound transaction.
func (s *Scheduler) StartNBTransaction() *Txn {
	return &Txn{s: s}
}

// SetValue requests value for key; nil deletes the key.
//
// The scheduler takes ownership of value: it keeps the very object (a
// pointer, for Kubernetes objects) as the request, the value believed held
// and the input of its dependencies and derived values, so the caller must
// not change it afterwards, as client-go's informer objects must not be
// mutated. To request a changed value, pass a new object (a DeepCopy with
// the change). A value changed in place and requested again is the same
// object: there is no old content left to compare it with, so it is taken
// as equal and no Update runs.
func (t *Txn) SetValue(key string, value any) *Txn {
	if n := len(t.values); t.index == nil && n > 0 {
		switch c := strings.Compare(key, t.values[n-1].Key); {
		case c == 0:
			t.values[n-1].Value = value
			return t
		case n == 1 || c == t.dir:
			t.dir = c
			t.values = appendDoubling(t.values, KeyValuePair{Key: key, Value: value})
			return t
		}
		t.index = make(map[string]int, 2*n)
		for i, kv := range t.values {
			t.index[kv.Key] = i
		}
	}
	if i, ok := t.index[key]; ok {
		t.values[i].Value = value
		return t
	}
	if t.index != nil {
		t.index[key] = len(t.values)
	}
	t.values = appendDoubling(t.values, KeyValuePair{Key: key, Value: value})
	return t
}

// WithDescription describes the transaction in logs and history.
func (t *Txn) WithDescription(d string) *Txn { t.description = d; return t }

// WithResync makes the transaction a resync of the given type.
func (t *Txn) WithResync(r ResyncType) *Txn { t.resync = r; return t }

// WithResyncKeys limits a DownstreamResync to the values of keys, to
// repair a few values in proportion to them rather than to everything the
// scheduler holds: only their descriptors are asked, for them only
// (Descriptor.RetrieveKeys, else Retrieve with the result filtered), and
// only their failed operations are attempted again; the failures and
// retries of other values are left as they are. A key the southbound does
// not report is taken as gone and re-created if desired. As with a whole
// downstream resync, a failed read makes Commit return a
// *TransactionError naming the descriptor, and none of that descriptor's
// operations run in the transaction. Commit rejects keys with any other
// resync type.
func (t *Txn) WithResyncKeys(keys ...string) *Txn {
	t.resyncKeys = append(t.resyncKeys, keys...)
	return t
}

// WithRevert undoes the applied operations, in reverse order, if any
// operation fails or a value is left INVALID, and restores the previous
// desired values. A value the southbound owned (OBTAINED) that the
// transaction took over is restored with its value, then as the
// northbound's (as in the reference). Resyncs are always best effort: the
// option is ignored for them.
func (t *Txn) WithRevert() *Txn { t.revert = true; return t }

// WithRetry retries failed operations of the values set by this transaction.
func (t *Txn) WithRetry(o RetryOptions) *Txn { o.Enabled = true; t.retry = o; return t }

// NonBlocking makes Commit return as soon as the transaction is queued.
func (t *Txn) NonBlocking() *Txn { t.nonBlocking = true; return t }

// Commit queues the transaction and, unless non-blocking, waits until it is
// executed. It returns the transaction's record and, if operations failed,
// a *TransactionError.
//
// The descriptor callbacks of a blocking Commit get a context that ends
// with ctx (or when the scheduler closes). When it ends, the callback in
// progress returns (its operation fails, is read back and is reported like
// any failure) and the transaction stops before its next operation: the
// operations not run are named in TxnRecord.NotApplied, their values stay
// as they were in the southbound (a value whose delete did not run stays
// available to what depends on it), and Commit returns, once the callback
// has, a *TransactionError that wraps ctx's error and names both (in a
// transaction with revert, the undo stops too, and the error does not
// report it reverted). A resync, or requesting them again, completes the
// values; the next transaction checks again what the stopped one reached
// but left undone: dependents it took down or made ready, derived values
// of what it created. A callback that
// ignores its context holds Commit up until it returns, as it holds up the
// scheduler. A transaction still queued when ctx ends is not waited for:
// Commit returns ctx's error, and the transaction, when its turn comes,
// applies nothing.
//
// The callbacks of a NonBlocking transaction get the scheduler's lifetime
// context (Scheduler.Context), which ctx does not affect.
func (t *Txn) Commit(ctx context.Context) (*TxnRecord, error) {
	for _, kv := range t.values {
		if kv.Key == "" {
			return nil, ErrEmptyKey
		}
	}
	if t.resync < NoResync || t.resync > DownstreamResync {
		return nil, fmt.Errorf("kvscheduler: invalid resync type %d", t.resync)
	}
	if len(t.resyncKeys) > 0 && t.resync != DownstreamResync {
		return nil, fmt.Errorf("kvscheduler: resync keys need a %s resync, not %s", DownstreamResync, t.resync)
	}
	for _, k := range t.resyncKeys {
		if k == "" {
			return nil, ErrEmptyKey
		}
	}
	j := &job{kind: jobTxn, txn: t}
	if !t.nonBlocking {
		j.done = make(chan jobResult, 1)
		j.ctx = ctx
	}
	if err := t.s.enqueue(j); err != nil {
		return nil, err
	}
	if t.nonBlocking {
		return nil, nil
	}
	select {
	case r := <-j.done:
		return r.rec, r.err
	case <-ctx.Done():
	}
	if !t.s.started(j) {
		return nil, ctx.Err()
	}
	// Its callback sees ctx end and its walk stops: the result says what
	// was applied. Close delivers one too if the callback hangs.
	r := <-j.done
	return r.rec, r.err
}
