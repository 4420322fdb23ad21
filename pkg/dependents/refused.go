package dependents

import (
	"maps"
	"slices"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// An owner refused an object (another owner keeps it, or the live object
// is a deleted owner's, see claimer) is computed again whenever the loop
// sees that object change: its deletion, once the owner that kept it let
// it go (deleted, or no longer wanting it), frees it, and the refused
// owner then claims it. Without this, the refused owner would stay FAILED
// until an event of its own. An object that was never created (it
// waited, PENDING, for what it is ordered after) sends no such change when
// its owner lets it go: the owners refused it are computed again in the
// transaction that withdraws it (see withdraw).

// unclaim drops the objects and the refusals of the owner at key from
// the loop's indexes.
func (h *loopHandler[T]) unclaim(key string) {
	d := h.desired[key]
	if d == nil {
		return
	}
	for objKey := range d.objectKeys() {
		if h.childOf[objKey] == key {
			delete(h.childOf, objKey)
		}
	}
	for _, o := range d.objects {
		if owners := h.refused[o.key]; owners != nil {
			delete(owners, key)
			if len(owners) == 0 {
				delete(h.refused, o.key)
			}
		}
	}
}

// noteRefusals records the objects d's owner, at key, was refused.
func (h *loopHandler[T]) noteRefusals(key string, d *desired) {
	for _, o := range d.objects {
		if o.contested == "" && o.stale == "" {
			continue
		}
		if h.refused[o.key] == nil {
			h.refused[o.key] = map[string]bool{}
		}
		h.refused[o.key][key] = true
	}
}

// withdraw takes the value at k out of the scheduler in txn, and returns
// the owners refused it when it is an object that was never created: the
// scheduler holds it PENDING (so it did not create it, or deleted it) and
// the loop's picture has no object of it, nor one it deleted whose
// deletion it has not seen. Such an object is free once withdrawn. An
// object that exists, or may (the scheduler created it, its create failed,
// the loop has not seen its deletion yet), is freed only by the change
// the loop sees of it (childChanged): the refused owner never takes over
// the object of the owner that let it go, it gets its own.
func (h *loopHandler[T]) withdraw(k string, txn eventloop.UpdateOperations) []string {
	var freed []string
	if _, ok := h.refused[k]; ok && h.live[k] == nil && h.gone[k] == "" &&
		h.sched.GetValueStatus(k).State == kvscheduler.Pending {
		freed = slices.Sorted(maps.Keys(h.refused[k]))
	}
	txn.Delete(k)
	h.dropDeleted(k)
	return freed
}
