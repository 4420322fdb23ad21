package dependents

import (
	"cmp"
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
			h.saveObject(objKey)
			delete(h.childOf, objKey)
		}
	}
	for _, o := range d.objects {
		if owners := h.refused[o.key]; owners != nil {
			h.saveObject(o.key)
			delete(owners, key)
			if len(owners) == 0 {
				delete(h.refused, o.key)
			}
		}
	}
}

// refusedSince returns when the owner at key was first refused each
// object of prev (its last desired state) it is still refused, so that a
// new computation keeps its place in the queue of those waiting.
func (h *loopHandler[T]) refusedSince(key string, prev *desired) map[string]uint64 {
	since := map[string]uint64{}
	if prev == nil {
		return since
	}
	for _, o := range prev.objects {
		if n, ok := h.refused[o.key][key]; ok {
			since[o.key] = n
		}
	}
	return since
}

// noteRefusals records the objects d's owner, at key, was refused, each
// with when it was first refused (since, or now).
func (h *loopHandler[T]) noteRefusals(key string, d *desired, since map[string]uint64) {
	for _, o := range d.objects {
		if o.contested == "" && o.stale == "" {
			continue
		}
		h.saveObject(o.key)
		n, ok := since[o.key]
		if !ok {
			h.refusals++
			n = h.refusals
		}
		if h.refused[o.key] == nil {
			h.refused[o.key] = map[string]uint64{}
		}
		h.refused[o.key][key] = n
	}
}

// refusedOrder returns the owners refused the object at objKey, the first
// refused first: when the object is freed, the owner that waited longest
// claims it, whatever its name (an owner deleted and created again under
// a name is a newcomer).
func (h *loopHandler[T]) refusedOrder(objKey string) []string {
	owners := slices.Collect(maps.Keys(h.refused[objKey]))
	slices.SortFunc(owners, func(a, b string) int {
		return cmp.Compare(h.refused[objKey][a], h.refused[objKey][b])
	})
	return owners
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
		freed = h.refusedOrder(k)
	}
	txn.Delete(k)
	h.dropDeleted(k)
	return freed
}
