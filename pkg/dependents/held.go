package dependents

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Held owners. At the first resync after a start nothing is known of what
// an owner last desired: when its handler fails then and objects of it
// exist, a full resync without values for them would delete them. Aborting
// the resync (as before) kept them, but every healing resync aborted the
// same way until the loop gave up (MaxFailedHealings): one broken owner
// stopped every other. Instead the owner is held: each of its objects is
// put as it is, read from the API server and projected onto the fields
// this field manager's Apply entry owns (kubedescriptor.OwnedProjection),
// so that applying it again changes nothing (not even the fields of other
// managers, which applying the live object with forced ownership would
// take), and the resync goes through for every owner. The projection
// keeps the objects' AnnotationOwner and ordering annotations, so a held
// owner deleted meanwhile has its objects deleted in reverse order. Its
// next successful computation replaces the held values as any update
// does.

// heldNote is what a held owner's condition adds to its handler's error.
func heldNote(err error, n int) error {
	return fmt.Errorf("%w; its %d objects are held as they are", err, n)
}

// liveGetter reads one object from the API server: nil, nil when there is
// none.
type liveGetter func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (runtime.Object, error)

// newLiveGetter reads objects through clients, with their managedFields
// (which the lean cache strips).
func newLiveGetter(clients *client.SharedClientFactory) liveGetter {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (runtime.Object, error) {
		c, err := clients.ForKind(gvk)
		if err != nil {
			return nil, err
		}
		obj, _, err := clients.NewObjects(gvk)
		if err != nil {
			return nil, err
		}
		if err := c.Get(ctx, namespace, name, obj, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil // the server's answer: gone since the informers listed it
			}
			return nil, err
		}
		return obj, nil
	}
}

// hold makes the owner at key, whose handler failed with cause and for
// which nothing was desired yet, a held owner (see above). It returns an
// error, which aborts the resync, when an object could not be read (never
// read as "no object"; a read forbidden for good holds the cache's copy)
// or when an object of this field manager names no owner that can be read
// (whose it is cannot be told). An owner left with
// no object (all gone since the informers listed them) is not held.
func (h *loopHandler[T]) hold(ctx context.Context, key string, cause error) error {
	objKeys, err := h.objectsNaming(key)
	if err != nil {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	d := &desired{values: map[string]any{}, held: true}
	var unread []error
	for _, objKey := range objKeys {
		v, label, err := h.heldValue(ctx, key, h.live[objKey])
		if err != nil && !apierrors.IsForbidden(err) {
			// A read that may yet succeed aborts the resync; a healing
			// one tries again.
			return fmt.Errorf("%w (cannot hold %s: %w)", cause, objKey, err)
		}
		if err != nil {
			// Forbidden for good. Held values are never written
			// (heldvalues.go): the cache's copy orders and keeps the
			// object as well, and one owner whose objects cannot be read
			// does not hold every other owner's resync back.
			var cerr error
			if v, cerr = h.cachedHeldValue(h.live[objKey]); cerr != nil {
				return fmt.Errorf("%w (cannot hold %s: %w)", cause, objKey, errors.Join(err, cerr))
			}
			unread = append(unread, fmt.Errorf("%s: %w", label, err))
			h.log.WithError(err).Warnf("dependents %s: %s: %s cannot be read from the API server; held as the cache has it", h.name, key, label)
		}
		if v == nil {
			continue
		}
		d.values[objKey] = v
		d.objects = append(d.objects, objState{key: objKey, label: label})
	}
	if len(d.objects) == 0 {
		return nil
	}
	owner := h.owners[key]
	// Its owner's, as a computed one's: compute takes a desired state of
	// another UID for a deleted owner's, and withdraws its values.
	d.uid = string(owner.GetUID())
	d.err = heldNote(cause, len(d.objects))
	if len(unread) > 0 {
		d.err = fmt.Errorf("%w (as the cache has them, not read from the API server: %w)", d.err, errors.Join(unread...))
	}
	// Its readiness rules are unknown: it keeps the markers the live
	// objects show it had before the restart (see before.go), never one
	// its objects' DefaultReady would give.
	d.wasReady = h.before.marked(key, d.uid, h.k.owner(key))
	h.build.heldReadiness(key, d, h.live)
	failed := h.sched.GetValueStatus(h.k.available(key)).State == kvscheduler.Pending
	h.build.latch(key, d, h.before.marked(key, d.uid, h.k.available(key)), failed)
	h.saveOwner(key)
	for objKey := range d.objectKeys() {
		h.saveObject(objKey)
		h.childOf[objKey] = key
		h.held.set(objKey, d.values[objKey])
	}
	h.desired[key] = d
	h.reports.set(key, owner.GetUID(), owner.GetGeneration(), d, d.err)
	h.log.WithError(cause).Warnf("dependents %s: %s: the handler failed at the first resync; its %d objects are held as they are",
		h.name, key, len(d.objects))
	return nil
}

// objectsNaming returns the keys, sorted, of the live objects of this
// field manager whose AnnotationOwner names the owner at key, of its
// current UID. An object naming another UID was left by an owner deleted
// (and perhaps created again under the name) while no replica ran: it is
// not inherited, so it is not held and the full resync deletes it.
func (h *loopHandler[T]) objectsNaming(key string) ([]string, error) {
	uid := string(h.owners[key].GetUID())
	var out []string
	for _, objKey := range slices.Sorted(maps.Keys(h.live)) {
		obj := h.live[objKey]
		m, err := meta.Accessor(obj)
		if err != nil || m.GetLabels()[kubedescriptor.LabelManagedBy] != h.fieldManager {
			continue
		}
		kind, owner, ownerUID, ok := parseOwner(obj)
		if !ok {
			return nil, fmt.Errorf("%s names no owner that can be read", objKey)
		}
		if kind == h.build.ownerGVK.Kind && owner == key && ownerUID == uid {
			out = append(out, objKey)
		}
	}
	return out, nil
}

// heldValue reads obj from the API server and returns the value that
// holds it as it is, with its label for statuses; nil when the server has
// no such object of this field manager and owner any more.
func (h *loopHandler[T]) heldValue(ctx context.Context, ownerKey string, obj runtime.Object) (any, string, error) {
	gvk, err := h.build.gvk(obj)
	if err != nil {
		return nil, "", err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, "", err
	}
	label := gvk.Kind + " " + m.GetName()
	// Bounded as the descriptor's requests are: the loop waits for it.
	ctx, cancel := context.WithTimeout(ctx, kubedescriptor.DefaultTimeout)
	defer cancel()
	live, err := h.get(ctx, gvk, m.GetNamespace(), m.GetName())
	if err != nil || live == nil {
		return nil, label, err
	}
	lm, err := meta.Accessor(live)
	if err != nil {
		return nil, label, err
	}
	uid := string(h.owners[ownerKey].GetUID())
	if kind, owner, ownerUID, ok := parseOwner(live); lm.GetLabels()[kubedescriptor.LabelManagedBy] != h.fieldManager ||
		!ok || kind != h.build.ownerGVK.Kind || owner != ownerKey || ownerUID != uid {
		return nil, label, nil // replaced since the informers listed it: not this owner's
	}
	u, ok, err := kubedescriptor.OwnedProjection(live, gvk, h.fieldManager)
	if err != nil {
		return nil, label, err
	}
	if !ok {
		// The field manager owns no field (its entry was removed by
		// hand): hold it by its label alone, which it carries already,
		// so that applying it changes no field.
		u = &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(lm.GetName())
		u.SetNamespace(lm.GetNamespace())
		u.SetLabels(map[string]string{kubedescriptor.LabelManagedBy: h.fieldManager})
	}
	return u, label, nil
}

// cachedHeldValue is the value that holds obj, the cache's copy of an
// object the API server would not give (heldValue failed): its identity,
// labels and annotations (its owner and ordering), without the fields,
// which a held value never writes.
func (h *loopHandler[T]) cachedHeldValue(obj runtime.Object) (any, error) {
	gvk, err := h.build.gvk(obj)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(m.GetName())
	u.SetNamespace(m.GetNamespace())
	u.SetLabels(maps.Clone(m.GetLabels()))
	u.SetAnnotations(maps.Clone(m.GetAnnotations()))
	return u, nil
}

// heldReadiness is readiness for a held owner, whose handler's ReadyWhen
// is unknown. Each object's report is its kind's DefaultReady (what the
// status shows), but the owner marker, what other owners require of it,
// is the one it had before the restart (wasReady, see before.go), kept
// while every held object exists and is not being deleted (one that is
// gone is ready by no rule): judging it by DefaultReady took down, at the
// restart alone, an object of another owner that RequiresOwner it whose
// rule called ready what DefaultReady does not, and let a new one be
// created on an owner whose rule called it not ready. The ready marker of
// every held object is put whatever its readiness: the held objects that
// require it carry that in their annotations, and a missing marker would
// have the scheduler delete them, where a held object is never deleted
// nor changed.
func (b *builder[T]) heldReadiness(ownerKey string, d *desired, live map[string]runtime.Object) {
	d.ready = 0
	all := make([]string, 0, len(d.objects))
	kept := d.wasReady
	for i := range d.objects {
		o := &d.objects[i]
		rk := b.k.ready(ownerKey, o.key)
		all = append(all, rk)
		d.values[rk] = marker{Needs: []string{o.key}}
		switch obj := live[o.key]; {
		case obj == nil:
			o.ready, o.why, kept = false, "not seen", false
		case deleting(obj):
			o.ready, o.why, kept = false, "being deleted", false
		default:
			o.ready, o.why = callReady(DefaultReady, obj)
		}
		if o.ready {
			d.ready++
		}
	}
	if kept {
		d.values[b.k.owner(ownerKey)] = marker{Needs: all}
	} else {
		delete(d.values, b.k.owner(ownerKey))
	}
}
