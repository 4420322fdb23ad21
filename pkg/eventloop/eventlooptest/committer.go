package eventlooptest

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// Committer is an eventloop.Committer that records every transaction and
// applies the successful ones to an in-memory key-value state, the way a KV
// scheduler would apply them to the southbound. Safe for concurrent use.
type Committer struct {
	mu    sync.Mutex
	txns  []eventloop.TxnRequest
	state map[string]any
	fail  func(eventloop.TxnRequest) error
}

// NewCommitter returns an empty recording committer.
func NewCommitter() *Committer {
	return &Committer{state: make(map[string]any)}
}

// Commit records txn, asks the failure function (see FailWith) whether it
// fails, and otherwise applies it: a FullResync or UpstreamResync replaces
// the whole state, a DownstreamResync changes nothing, an update puts and
// deletes. The summary's SeqNum is the transaction's position in Txns,
// from 1; its operations are the requested PUTs and DELETEs.
func (c *Committer) Commit(_ context.Context, txn eventloop.TxnRequest) (eventloop.TxnSummary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	txn.Values = append([]eventloop.KeyValue(nil), txn.Values...)
	c.txns = append(c.txns, txn)
	sum := eventloop.TxnSummary{
		SeqNum: uint64(len(c.txns)),
		Text:   fmt.Sprintf("%s of %d values", txn.Method, len(txn.Values)),
		Ops:    make([]eventloop.TxnOp, 0, len(txn.Values)),
	}
	var failed error
	if c.fail != nil {
		failed = c.fail(txn)
	}
	for _, kv := range txn.Values {
		op := eventloop.TxnOp{Operation: "PUT", Key: kv.Key}
		if kv.Value == nil {
			op.Operation = "DELETE"
		}
		if failed != nil {
			op.Error = failed.Error()
			sum.FailedOps++
		}
		sum.Ops = append(sum.Ops, op)
	}
	if failed != nil {
		return sum, failed
	}
	switch txn.Method {
	case eventloop.FullResync, eventloop.UpstreamResync:
		c.state = make(map[string]any, len(txn.Values))
		for _, kv := range txn.Values {
			if kv.Value != nil {
				c.state[kv.Key] = kv.Value
			}
		}
	case eventloop.Update:
		for _, kv := range txn.Values {
			if kv.Value == nil {
				delete(c.state, kv.Key)
			} else {
				c.state[kv.Key] = kv.Value
			}
		}
	}
	return sum, nil
}

// FailWith makes Commit fail when fail returns an error (nil restores
// success). A failed transaction is recorded but not applied.
func (c *Committer) FailWith(fail func(eventloop.TxnRequest) error) {
	c.mu.Lock()
	c.fail = fail
	c.mu.Unlock()
}

// Txns returns the transactions committed so far, in order.
func (c *Committer) Txns() []eventloop.TxnRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]eventloop.TxnRequest(nil), c.txns...)
}

// Last returns the latest transaction.
func (c *Committer) Last() (eventloop.TxnRequest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.txns) == 0 {
		return eventloop.TxnRequest{}, false
	}
	return c.txns[len(c.txns)-1], true
}

// State returns a copy of the state the successful transactions produced.
func (c *Committer) State() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.state)
}
