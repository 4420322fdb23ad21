package dependents

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// readiness judges d's objects by what live shows, and sets the markers
// of those ready and of the owner, if all are.
func (b *builder[T]) readiness(ownerKey string, d *desired, live map[string]runtime.Object) {
	d.ready = 0
	all := make([]string, 0, len(d.objects))
	for i := range d.objects {
		o := &d.objects[i]
		o.ready, o.why = false, "not created yet"
		switch obj := live[o.key]; {
		case o.contested != "":
			o.why = o.contested
		case o.stale != "":
			o.why = o.stale
		case obj != nil && deleting(obj):
			// Its last state is of an object on its way out: what waits for
			// it must not be created on it.
			o.why = "being deleted"

		case obj != nil:
			if o.rule == nil {
				// DefaultReady only reads: it may be given the cache's object.
				o.ready, o.why = callReady(DefaultReady, obj)
				break
			}
			// obj is the shared informer cache's own object: a user's
			// rule gets a copy, so that what it writes reaches no other
			// reader of the cache and races none.
			o.ready, o.why = callReady(o.rule, obj.DeepCopyObject())
		}
		rk := b.k.ready(ownerKey, o.key)
		all = append(all, rk)
		if o.ready {
			d.ready++
			d.values[rk] = marker{Needs: []string{o.key}}
		} else {
			delete(d.values, rk)
		}
	}
	if d.ready == len(d.objects) {
		d.values[b.k.owner(ownerKey)] = marker{Needs: all}
	} else {
		delete(d.values, b.k.owner(ownerKey))
	}
}

// latch sets the owner's latched marker (see
// Object.RequiresOwnerAvailable) from d's readiness (its owner marker:
// every object ready, or for a held owner the marker it had before the
// restart), the latch of before (was) and whether the marker is waiting
// for the owner's requirements (failed): it needs them, and is ordered
// after the owner's objects, so that what waits for it is deleted before
// them.
func (b *builder[T]) latch(ownerKey string, d *desired, was, failed bool) {
	_, ready := d.values[b.k.owner(ownerKey)]
	d.available = !failed && (was || ready)
	if !d.available {
		delete(d.values, b.k.available(ownerKey))
		return
	}
	d.values[b.k.available(ownerKey)] = marker{Needs: d.needs, After: slices.Collect(d.objectKeys())}
}

// refreshReadiness is readiness for an owner whose handler failed: its
// last desired objects, judged again.
func (b *builder[T]) refreshReadiness(ownerKey string, d *desired, live map[string]runtime.Object) {
	if d.held {
		b.heldReadiness(ownerKey, d, live)
		return
	}
	b.readiness(ownerKey, d, live)
}

// callReady calls a readiness rule; a panic is "not ready".
func callReady(f ReadyFunc, obj runtime.Object) (ready bool, why string) {
	defer func() {
		if r := recover(); r != nil {
			ready, why = false, fmt.Sprintf("its readiness rule panicked: %v", r)
		}
	}()
	return f(obj)
}

// deleting tells whether obj has a deletion timestamp.
func deleting(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetDeletionTimestamp() != nil
}
