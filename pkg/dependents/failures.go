package dependents

import (
	"context"
	"fmt"
	"sync"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// failRead is the key of a View.Failure read (see readersOf).
func failRead(key string) string { return "failure:" + key }

// failWatch is the set of object keys whose failure a handler read through
// its View: the loop's goroutine adds to it, the scheduler's state watch
// (another goroutine) asks it which state changes to push to the loop.
type failWatch struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (w *failWatch) add(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]bool{}
	}
	w.keys[key] = true
}

func (w *failWatch) drop(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.keys, key)
}

func (w *failWatch) has(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys[key]
}

// failureOf is the error of the scheduler's last operation on the value at
// key while it is FAILED, RETRYING or INVALID; nil otherwise.
func failureOf(s *kvscheduler.Scheduler, key string) error {
	st := s.GetValueStatus(key)
	switch st.State {
	case kvscheduler.Failed, kvscheduler.Retrying, kvscheduler.Invalid:
		if st.Error != nil {
			return st.Error
		}
		return fmt.Errorf("%s is %s", key, st.State)
	}
	return nil
}

// pushFailureChange tells the loop that the scheduler's state of the value
// at key changed, when a handler read its failure: the state watch runs on
// its own goroutine, and what a handler reads is the loop's.
func (d *Dependents) pushFailureChange(ctx context.Context, key string) {
	if d.fails == nil || !d.fails.has(key) {
		return
	}
	if err := d.loop.PushEventContext(ctx, &failureChanged{key: key}); err != nil && ctx.Err() == nil {
		d.log.WithError(err).Warnf("dependents %s: the failure of %s did not reach the loop", d.name, key)
	}
}

// onFailureChanged computes again the owners that read the failure of the
// value at key; once none does, its state changes are no longer pushed.
func (h *loopHandler[T]) onFailureChanged(key string, txn eventloop.UpdateOperations) (string, error) {
	readers := h.readersOf(failRead(key), "")
	if len(readers) == 0 {
		h.fails.drop(key)
		return "", nil
	}
	return h.applyAll(readers, txn)
}

// failureChanged is the event the scheduler's state watch pushes when the
// state of a value whose failure a handler read (View.Failure) changes.
type failureChanged struct{ key string }

var _ eventloop.UpdateEvent = (*failureChanged)(nil)

// GetName implements eventloop.Event.
func (f *failureChanged) GetName() string { return "FailureChanged" }

// String implements eventloop.Event.
func (f *failureChanged) String() string { return "FailureChanged (" + f.key + ")" }

// Method implements eventloop.Event.
func (f *failureChanged) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (f *failureChanged) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (f *failureChanged) Done(error) {}

// TransactionType implements eventloop.UpdateEvent.
func (f *failureChanged) TransactionType() eventloop.UpdateTransactionType {
	return eventloop.BestEffort
}

// Direction implements eventloop.UpdateEvent.
func (f *failureChanged) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }
