package dependents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// ComputeAgain has the event loop compute the owners at keys
// ("namespace/name", or "name" for a cluster-scoped kind) again, in one
// transaction, and put what changed of their objects. It is for state a
// handler reads that the registration does not watch: an allocation
// shared across owners (node ports) that one owner frees and another
// waits for, or a setting outside the API server. The registration
// already computes an owner again when it, its objects or what it read
// through its View change.
//
// It never blocks, so a handler may call it: it returns as soon as the
// event is queued, or eventloop.ErrQueueFull (try again later) or
// eventloop.ErrClosed. A key of no current owner is skipped. An owner
// computed again whose handler fails keeps its objects, as on any event.
func (d *Dependents) ComputeAgain(keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := d.loop.PushEvent(&computeAgain{keys: slices.Clone(keys)}); err != nil {
		return fmt.Errorf("dependents %s: compute %s again: %w", d.name, strings.Join(keys, ", "), err)
	}
	return nil
}

// onComputeAgain computes again the owners of keys the loop knows.
func (h *loopHandler[T]) onComputeAgain(keys []string, txn eventloop.UpdateOperations) (string, error) {
	var known []string
	for _, key := range keys {
		if _, ok := h.owners[key]; ok {
			known = append(known, key)
		}
	}
	return h.applyAll(known, txn)
}

// computeAgain is the event ComputeAgain pushes, and computeStaleSoon
// (afterAbort).
type computeAgain struct {
	keys       []string
	afterAbort bool
}

var _ eventloop.UpdateEvent = (*computeAgain)(nil)

// GetName implements eventloop.Event.
func (c *computeAgain) GetName() string { return "ComputeAgain" }

// String implements eventloop.Event.
func (c *computeAgain) String() string { return "ComputeAgain (" + strings.Join(c.keys, ", ") + ")" }

// Method implements eventloop.Event.
func (c *computeAgain) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (c *computeAgain) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (c *computeAgain) Done(error) {}

// TransactionType implements eventloop.UpdateEvent.
func (c *computeAgain) TransactionType() eventloop.UpdateTransactionType {
	return eventloop.BestEffort
}

// Direction implements eventloop.UpdateEvent.
func (c *computeAgain) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }
