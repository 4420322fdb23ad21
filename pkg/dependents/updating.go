package dependents

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// Objects the loop updates. When an owner's new spec changes one of its
// objects, the loop's picture of that object is of its previous spec until
// the loop sees the updated object: judged on it (every replica of the old
// Deployment available), an object that requires it or is ordered after
// it, put for the first time in the transaction that updates it, would be
// created before the object at its new spec was ever ready. So such a new
// object is held (not put, "waits for ... to be seen at its new spec")
// until the loop sees the object where the server stored the new value:
// the descriptor records each landing of what it wanted (the object its
// apply returned, or a live object its Retrieve found in sync, see
// kubedescriptor.Landings), and the mark ends once the loop's picture is
// that object at that resourceVersion or later, or gone. Comparing the
// fields the value sets with the live object's cannot tell: the server
// rewrites some (a Secret's stringData is stored as data; "1000m" over "1"
// stores nothing new, no event follows), so the hold would never end.
// Another version of the object is not enough either: a status write of
// its controller at the old spec (or any write of another manager) makes
// one, and the update itself may not have landed yet (refused, retried).
// A hold that ends without an event of the object (the apply stored
// nothing new, or the object was found in sync) is ended by a follow-up
// the loop pushes after the transaction that held something
// (updatesLanded). The change never takes down what exists: the object
// changed keeps its readiness marker until the loop sees it not ready, and
// objects that exist are never held (holding is not putting, which would
// delete them). As the loop's own deletes (gone.go) do for IncludeWhen.

// markUpdates records the objects of d whose value differs from the one
// last put for them (prev) and that exist in the loop's picture, not yet
// at the new value, with the last landing recorded before (see seenVersion). With nothing put
// before (the first resync after a restart, the owner edited while no
// replica ran), the value is compared with the live object, as the
// scheduler's resync does: one it will update is marked too.
func (h *loopHandler[T]) markUpdates(prev, d *desired) {
	for _, o := range d.objects {
		now, live := d.values[o.key], h.live[o.key]
		if now == nil || live == nil || kubedescriptor.Equivalent(live, now) {
			continue
		}
		if prev != nil {
			if old := prev.values[o.key]; old == nil || kubedescriptor.Equivalent(old, now) {
				continue
			}
		}
		h.saveObject(o.key)
		h.updating[o.key] = h.landings.Seq()
	}
}

// holdNew takes out of d, the desired state of the owner at key, the
// objects put for the first time (not in prev, not on the server) that
// require or are ordered after an object the loop changed and has not
// seen since: one of the owner's own, or one of another owner it
// RequiresOwner, whose readiness marker is judged on the same stale
// picture. The owner reads the other owner's objects it waits for, so
// that it is computed again once the loop sees them.
func (h *loopHandler[T]) holdNew(key string, prev, d *desired) {
	for i := range d.objects {
		o := &d.objects[i]
		if d.values[o.key] == nil || h.live[o.key] != nil || prev != nil && prev.values[o.key] != nil {
			continue
		}
		if why := h.waitsForUpdate(key, d, o); why != "" {
			delete(d.values, o.key)
			o.why = why
			h.holding = true
		}
	}
}

// waitsForUpdate says what changed object o, of the owner at key whose
// desired state is d, waits to see at its new spec ("" for nothing).
func (h *loopHandler[T]) waitsForUpdate(key string, d *desired, o *objState) string {
	for _, a := range o.after {
		if h.isUpdating(a) {
			return "waits for " + labelIn(d, a) + " to be seen at its new spec"
		}
	}
	for _, other := range o.owners {
		od := h.desired[other]
		if od == nil || other == key {
			continue
		}
		for _, so := range od.objects {
			if h.childOf[so.key] != other || !h.isUpdating(so.key) {
				continue
			}
			h.noteRead(key, liveRead(so.key))
			return fmt.Sprintf("waits for %s %s's %s to be seen at its new spec", h.build.ownerGVK.Kind, other, so.label)
		}
	}
	return ""
}

// labelIn returns the label of d's object at key.
func labelIn(d *desired, key string) string {
	for _, o := range d.objects {
		if o.key == key {
			return o.label
		}
	}
	return key
}

// isUpdating tells whether the object at key was changed by the loop and
// the loop has not seen it since.
func (h *loopHandler[T]) isUpdating(key string) bool {
	_, ok := h.updating[key]
	return ok
}

// seenVersion clears the mark of the object at key once obj is where a
// landing recorded after the mark put it (or nil: gone).
func (h *loopHandler[T]) seenVersion(key string, obj runtime.Object) {
	if since, ok := h.updating[key]; ok && (obj == nil || h.landings.Landed(key, since, obj)) {
		delete(h.updating, key)
	}
}
