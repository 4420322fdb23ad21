package dependents

import (
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A held-without record the API server refuses for good (a webhook or an
// admission policy forbidding the annotation on one object, a missing
// permission to patch it) is that object's owner's failure, not every
// owner's. A record that cannot be written for a while (a timeout, the API
// server restarting, a conflict) aborts the event as before (see
// heldwithout.go): the healing resync writes it, and the marker's
// withdrawal waits for it. But a refusal that will not change would abort
// every event and every healing resync until the loop gives up for good,
// and no owner of the registration would be handled again. So the event
// goes on without that record: the owner's condition says, by name, which
// object could not be recorded and why, and the log says it once (at
// warning, once per change of what is refused). What is lost is the record's
// protection for that one object (docs/safety.md): should it stay (it is
// held, ordered only, or its DELETE is refused too, or a stop cuts the
// DELETE), the next restart may read it as evidence that the marker it
// names was put.

// refusedForGood tells whether err is the API server's refusal of the
// request itself, which sending it again does not change.
func refusedForGood(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// noteRefusedRecords puts, for each owner refused records in this event
// or carrying some from before, the records refused for good of its
// objects in this event (nil: none) in its report, and logs each owner's
// once at warning.
func (h *loopHandler[T]) noteRefusedRecords(refused map[string]error) {
	keys := append(slices.Collect(maps.Keys(refused)), h.reports.withRecordErr()...)
	slices.Sort(keys)
	for _, key := range slices.Compact(keys) {
		if _, ok := h.desired[key]; !ok {
			continue
		}
		err := refused[key]
		if !h.reports.setRecordErr(key, err) || err == nil {
			continue
		}
		h.log.WithError(err).Warnf("dependents %s: %s: a held-without record was refused; the owner's other work goes on without it", h.name, key)
	}
}
