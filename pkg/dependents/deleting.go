package dependents

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Owners being deleted. An owner with a deletionTimestamp (a finalizer of
// the user's or of another controller holds it, or a foreground deletion)
// gets nothing new, as a wrangler generating handler applies nothing for
// it: its handler is not called, and what was last desired for it is
// frozen. Each of its objects is put as a held value (see heldvalues.go),
// so the descriptors neither create one (an object never created, or
// deleted by hand since) nor write one back, and what an object's
// annotations name orders it only, never takes it down. A cleanup that
// deletes the owner's objects before it lets the owner go is not fought,
// and nothing that exists is deleted while the owner does: once it is
// gone its values are withdrawn and its objects deleted in reverse order,
// as for any owner.

// computeDeleting is compute for the owner at key, which is being
// deleted. With nothing desired for it yet (it was first seen being
// deleted) it returns an error: nothing is put for it, and at the first
// resync its live objects are held as they are (Resync, hold).
func computeDeleting[T generic.RuntimeMetaObject](h *loopHandler[T], key string, owner T) error {
	uid := string(owner.GetUID())
	prev := h.desired[key]
	if prev != nil && prev.uid != uid {
		h.forget(key) // a deleted owner's, as in compute
		prev = nil
	}
	if prev == nil {
		err := fmt.Errorf("owner %s is being deleted: nothing new is applied for it", key)
		h.reports.set(key, owner.GetUID(), owner.GetGeneration(), nil, err)
		return err
	}
	// Judged in a copy: prev is what the last committed transaction put
	// (see undo.go).
	prev = prev.clone()
	h.desired[key] = prev
	if !prev.deleting {
		prev.deleting = true
		h.freeze(prev)
		h.log.Infof("dependents %s: %s is being deleted: nothing new is applied for it; its objects stay until it is gone",
			h.name, key)
	}
	failed := h.sched.GetValueStatus(h.k.available(key)).State == kvscheduler.Pending
	h.build.refreshReadiness(key, prev, h.live)
	h.build.latch(key, prev, prev.available, failed)
	h.reports.set(key, owner.GetUID(), owner.GetGeneration(), prev, prev.err)
	return nil
}

// freeze puts each object of d as a held value: a copy, so that the
// scheduler, which keeps the dependencies of an identical value, asks the
// descriptor again and gets them as ordering only.
func (h *loopHandler[T]) freeze(d *desired) {
	for objKey := range d.objectKeys() {
		v, ok := d.values[objKey].(runtime.Object)
		if !ok || v == nil {
			continue // contested or stale: not put
		}
		c := v.DeepCopyObject()
		d.values[objKey] = c
		h.held.set(objKey, c)
	}
}
