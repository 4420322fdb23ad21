package dependents

import (
	"maps"
	"slices"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// updatesLanded is the follow-up the loop pushes after a transaction in
// which an owner's new object was held for an object being updated (see
// updating.go): the transaction's applies record their landings, and an
// apply that stored nothing new (or an object a resync found in sync)
// brings no event of the object that would end the hold.
type updatesLanded struct{}

var _ eventloop.UpdateEvent = (*updatesLanded)(nil)

// GetName implements eventloop.Event.
func (*updatesLanded) GetName() string { return "UpdatesLanded" }

// String implements eventloop.Event.
func (*updatesLanded) String() string { return "UpdatesLanded" }

// Method implements eventloop.Event.
func (*updatesLanded) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (*updatesLanded) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (*updatesLanded) Done(error) {}

// TransactionType implements eventloop.UpdateEvent.
func (*updatesLanded) TransactionType() eventloop.UpdateTransactionType {
	return eventloop.BestEffort
}

// Direction implements eventloop.UpdateEvent.
func (*updatesLanded) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

// pushLanded pushes updatesLanded when the event just handled held a new
// object for an update.
func (h *loopHandler[T]) pushLanded(txn eventloop.ResyncOperations) error {
	if !h.holding {
		return nil
	}
	h.holding = false
	return txn.PushFollowUp(&updatesLanded{})
}

// onUpdatesLanded ends the marks of the objects the loop's picture shows
// where their updates landed, and computes again the owners that may
// have held something for them: their keepers and the owners that read
// them (a RequiresOwner of their keeper).
func (h *loopHandler[T]) onUpdatesLanded(txn eventloop.UpdateOperations) (string, error) {
	var keys []string
	for _, key := range slices.Sorted(maps.Keys(h.updating)) {
		h.seenVersion(key, h.live[key])
		if !h.isUpdating(key) {
			keys = append(keys, h.childOf[key])
			keys = append(keys, h.readersOf(liveRead(key), "")...)
		}
	}
	if len(keys) == 0 {
		return "", nil
	}
	return h.applyAll(keys, txn)
}
