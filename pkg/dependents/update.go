package dependents

import (
	"fmt"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// Update implements eventloop.EventHandler.
func (h *loopHandler[T]) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (_ string, err error) {
	h.beginTxn(false)
	defer h.abortOnPanic(&err)
	if !h.synced {
		// The first resync aborted (a read of what vouches for a marker
		// failed): an owner computed now would not inherit what the live
		// objects show was put before the restart, and its latch would be
		// read as open. Or an event aborted before this handler was called
		// (see TxnDone): the picture misses what it brought. The healing
		// resync reads the event's state.
		return "waiting for a resync", nil
	}
	note, err := h.update(ev, txn)
	if err != nil {
		return note, err
	}
	// Before the commit (see heldwithout.go).
	if err := h.recordHeldWithout(txn.Context()); err != nil {
		// Nothing is committed (TxnDone puts the picture back): the marker
		// the record is for stays put until a healing resync writes the
		// record first.
		return note, eventloop.NewAbortEventError(fmt.Errorf("dependents %s: %w", h.name, err))
	}
	return note, h.pushLanded(txn)
}

// update handles one event of Update.
func (h *loopHandler[T]) update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	if _, ok := ev.(*updatesLanded); ok {
		return h.onUpdatesLanded(txn)
	}
	if r, ok := ev.(*repair); ok {
		return runRepair(txn.Context(), h.sched, r.key)
	}
	if f, ok := ev.(*failureChanged); ok {
		return h.onFailureChanged(f.key, txn)
	}
	if c, ok := ev.(*computeAgain); ok {
		return h.onComputeAgain(c.keys, txn)
	}
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok {
		return "", nil
	}
	var keys []string
	if change.Resource == h.ownerRes {
		ownerKey := change.Key
		if o, ok := change.NewValue.(T); ok {
			h.owners[ownerKey] = o
		} else {
			delete(h.owners, ownerKey)
		}
		if !statusOnly(change) {
			// A status-only change (its own status handler's write, or its
			// objects' controllers') changes nothing the owner's handler
			// is given to decide on; only those that read it through
			// their View are computed again.
			keys = append(keys, ownerKey)
		}
		keys = append(keys, h.readersOf(ownerRead(ownerKey), ownerKey)...)
	}
	// Not "else": an owner kind among Options.Kinds (a composite keeping
	// owners of its own kind) is an owner and an object at once, and its
	// change is both.
	if h.childRes[change.Resource] {
		keeper, refused, err := h.childChanged(change, txn)
		if err != nil {
			return "", err
		}
		keys = append(keys, keeper)
		keys = append(keys, refused...)
		if key, err := h.build.key(changedObject(change)); err == nil {
			keys = append(keys, h.readersOf(liveRead(key), "")...)
		}
	}
	if len(keys) == 0 {
		return "", nil
	}
	return h.applyAll(keys, txn)
}
