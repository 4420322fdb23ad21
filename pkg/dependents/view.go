package dependents

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// ViewHandler is a Handler that also reads the loop's picture of the
// other owners and of the live objects (see View and RegisterView).
type ViewHandler[T generic.RuntimeMetaObject] func(owner T, view View[T]) ([]*Object, error)

// View is a read-only view of the event loop's picture, in the loop's
// order: the owners and the objects of Options.Kinds as the events
// processed so far show them (never the informers' newer view), so that
// two owners computed in one event see the same world. It is valid only
// during the handler's call, on its goroutine; afterwards it returns
// nothing. What a handler read is remembered: when another owner it read,
// or a live object it read (present or not), changes, the owner is
// computed again in the same event.
type View[T generic.RuntimeMetaObject] interface {
	// Owner returns a copy of the owner at namespace and name ("" for a
	// cluster-scoped owner kind), false if the loop knows none.
	Owner(namespace, name string) (T, bool)
	// Owners returns copies of every owner the loop knows, by namespace
	// and name. Reading them all makes the owner a reader of every one.
	Owners() []T
	// Live returns a copy of the object of kind gvk (one of
	// Options.Kinds) at namespace and name as the API server showed it to
	// the loop, false if it does not exist (or the loop deleted it and
	// has not seen it go yet).
	Live(gvk schema.GroupVersionKind, namespace, name string) (runtime.Object, bool)
	// Failure returns the error of the scheduler's last operation on the
	// object of kind gvk at namespace and name while it is FAILED,
	// RETRYING or INVALID (the API server refused it: a node port another
	// Service holds, say), nil otherwise. It is the scheduler's state when
	// the handler runs; when it changes, the owner is computed again, so a
	// handler can answer a refusal with another object (it keeps what it
	// learnt itself: once the object is applied, Failure is nil again).
	Failure(gvk schema.GroupVersionKind, namespace, name string) error
}

// view is the View of one handler call for the owner reader.
type view[T generic.RuntimeMetaObject] struct {
	h      *loopHandler[T]
	reader string
	done   atomic.Bool
}

// ownerRead and liveRead are the keys of what a reader read.
func ownerRead(key string) string { return "owner:" + key }
func liveRead(key string) string  { return "live:" + key }

func (v *view[T]) read(key string) { v.h.noteRead(v.reader, key) }

// noteRead records that the owner at reader read what key names (see
// ownerRead, liveRead): it is computed again when that changes.
func (h *loopHandler[T]) noteRead(reader, key string) {
	h.saveOwner(reader)
	r := h.reads[reader]
	if r == nil {
		r = map[string]bool{}
		h.reads[reader] = r
	}
	r[key] = true
}

func (v *view[T]) Owner(namespace, name string) (T, bool) {
	var zero T
	if v.done.Load() {
		return zero, false
	}
	key := ownerKey(namespace, name)
	v.read(ownerRead(key))
	o, ok := v.h.owners[key]
	if !ok {
		return zero, false
	}
	c, ok := o.DeepCopyObject().(T)
	return c, ok
}

func (v *view[T]) Owners() []T {
	if v.done.Load() {
		return nil
	}
	v.read(ownerRead("*"))
	out := make([]T, 0, len(v.h.owners))
	for _, key := range slices.Sorted(maps.Keys(v.h.owners)) {
		if c, ok := v.h.owners[key].DeepCopyObject().(T); ok {
			out = append(out, c)
		}
	}
	return out
}

func (v *view[T]) Live(gvk schema.GroupVersionKind, namespace, name string) (runtime.Object, bool) {
	if v.done.Load() {
		return nil, false
	}
	key := kubedescriptor.KeyFor(gvk, namespace, name)
	v.read(liveRead(key))
	obj, ok := v.h.live[key]
	if !ok || obj == nil {
		return nil, false
	}
	return obj.DeepCopyObject(), true
}

// readersOf returns the owners (other than changed) that read what key
// names (an ownerRead or a liveRead), sorted; for an owner's key, also
// those that read every owner (View.Owners).
func (h *loopHandler[T]) readersOf(key, changed string) []string {
	all := strings.HasPrefix(key, "owner:")
	var out []string
	for reader, r := range h.reads {
		if reader != changed && (r[key] || all && r[ownerRead("*")]) {
			out = append(out, reader)
		}
	}
	slices.Sort(out)
	return out
}

func (v *view[T]) Failure(gvk schema.GroupVersionKind, namespace, name string) error {
	if v.done.Load() {
		return nil
	}
	key := kubedescriptor.KeyFor(gvk, namespace, name)
	v.read(failRead(key))
	v.h.fails.add(key)
	return failureOf(v.h.sched, key)
}

// computeRequirersAgain computes again, after a resync computed the
// owners in order, each owner that read an owner computed after it (a
// RequiresOwner names that owner's objects in its annotation, see
// builder.desired): what it read then was not known yet. One pass is
// enough: the objects an owner keeps do not depend on what it read of
// others.
func (h *loopHandler[T]) computeRequirersAgain(order []string) {
	for _, key := range order { // sorted: computed later is greater
		for r := range h.reads[key] {
			other, ok := strings.CutPrefix(r, ownerRead(""))
			if ok && other > key && h.desired[other] != nil {
				_ = h.compute(key) // a failure keeps its last desired state, reported
				break
			}
		}
	}
}

// callHandler calls the user's handler with a copy of owner, the owner at
// key, and a View valid during the call; a panic is its error, as the
// loop's handlers' are.
func callHandler[T generic.RuntimeMetaObject](h *loopHandler[T], key string, owner T) (objs []*Object, err error) {
	v := &view[T]{h: h, reader: key}
	defer func() {
		v.done.Store(true)
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	c, ok := owner.DeepCopyObject().(T)
	if !ok {
		return nil, fmt.Errorf("cannot copy %T", owner)
	}
	return h.handler(c, v)
}
