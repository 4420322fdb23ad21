package dependents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// AnnotationHeldWithout lists, comma separated, on an object a held owner
// keeps, the markers of other owners its lariat.dev/depends-on annotation
// names (RequiresOwner, RequiresOwnerAvailable) that the registration did
// not put the last time it judged them. Only this registration writes it,
// and only on held objects (see heldwithout.go).
const AnnotationHeldWithout = "lariat.dev/held-without"

// A held object is not evidence. Readiness across a restart is read from
// the objects that require it (before.go): the scheduler deletes a
// requirer once the marker it requires is gone, so a requirer still there
// shows the marker was put. A held object is the exception: its
// dependencies only order it (heldvalues.go), so it stays while what it
// requires is absent, and at the next restart it would vouch for a marker
// that was not there (a held requirer of an owner judged not ready by its
// rule, then that owner held at a second restart: it inherited a marker
// and a new requirer was created on it).
//
// So the registration records the verdict on what it holds, where the
// next restart reads it: before each transaction commits, every held
// object that names a marker the transaction does not put carries that
// marker in AnnotationHeldWithout, and readBeforeRestart takes no marker
// from an object that lists it. The record is written before the commit
// that takes the marker away, so no stop can fall between the two; a write
// that fails aborts the event, update or resync, so nothing is committed
// and the marker stays until a healing resync writes the record first.
// The annotation is set by a merge patch of its own field manager
// (heldWithoutManager), so the held object's projection (the Apply entry
// of the registration's field manager) and every other field stay as they
// are. When a marker is put again, it leaves the list (a marker put while
// the object is held does make it evidence) once the transaction that
// put it has committed: the record is written before the commit, which
// may yet abort, so the marker leaves it at an event after. When the
// owner's handler answers, the object's computed value sets the annotation
// empty, taking it over by the forced apply (builder.clearHeldWithout):
// an applied requirer is evidence again, as the scheduler applies it only
// while what it requires is there.

// heldWithoutManager is the field manager of the AnnotationHeldWithout
// patches of a registration whose field manager is fieldManager.
func heldWithoutManager(fieldManager string) string { return fieldManager + "-held" }

// annotationPatcher sets (value non-empty) or removes AnnotationHeldWithout
// on the object of gvk at namespace/name if its UID is uid; an object gone
// is no error.
type annotationPatcher func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, uid types.UID, value string) error

// newAnnotationPatcher patches through clients with fieldManager's
// heldWithoutManager.
func newAnnotationPatcher(clients *client.SharedClientFactory, fieldManager string) annotationPatcher {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, uid types.UID, value string) error {
		c, err := clients.ForKind(gvk)
		if err != nil {
			return err
		}
		var v any // null removes it
		if value != "" {
			v = value
		}
		// The UID is a precondition: an object created again under the
		// name is not the one held.
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid, "annotations": map[string]any{AnnotationHeldWithout: v}}})
		if err != nil {
			return err
		}
		obj, _, err := clients.NewObjects(gvk)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, kubedescriptor.DefaultTimeout)
		defer cancel()
		err = c.Patch(ctx, namespace, name, types.MergePatchType, body, obj, metav1.PatchOptions{FieldManager: heldWithoutManager(fieldManager)})
		if apierrors.IsNotFound(err) || uidChanged(err) {
			return nil // gone, or another object now holds the name
		}
		return err
	}
}

// uidChanged tells whether err is the API server's answer to a merge patch
// whose metadata.uid is not the object's: 422 Invalid, "metadata.uid:
// field is immutable" (a uid in a patch body is not a precondition the way
// it is in an update's, so it is checked as a change of the field). The
// object under the name was created again: not the one held.
func uidChanged(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// recordHeldWithout brings AnnotationHeldWithout of every held object,
// and of every object of an owner that needs a marker not put now, up to
// date with what is put now (see above): the markers it names that no
// owner's desired state puts. Called before the event's transaction
// commits, so before the scheduler deletes a requirer whose marker goes.
func (h *loopHandler[T]) recordHeldWithout(ctx context.Context) error {
	var errs []error
	refused := map[string]error{} // owner key -> the records refused for good of its objects
	defer func() { h.noteRefusedRecords(refused) }()
	for _, ownerKey := range slices.Sorted(maps.Keys(h.desired)) {
		d := h.desired[ownerKey]
		if !d.held && h.putsAll(d.needs) {
			continue
		}
		for _, o := range d.objects {
			live := h.live[o.key]
			if live == nil || !h.managedByUs(live) {
				// Not there, or not the registration's (a user's object
				// under the name): never written, and no evidence at a
				// restart either (vouch.go reads only objects it manages).
				continue
			}
			// A held object is judged by its held value; a requirer
			// whose marker is gone, by what the server holds: the
			// scheduler is about to delete it, and a stop may cut that
			// DELETE, leaving it naming the marker.
			v := any(live)
			if d.held {
				v = d.values[o.key]
			}
			named := h.othersMarkers(v)
			if len(named) == 0 {
				continue
			}
			recorded := recordedWithout(live)
			var absent []string
			for _, k := range named {
				// A marker leaves the record only once the scheduler has
				// it: put by a transaction that committed. This one may
				// yet abort, and a record cleared for a put that never
				// landed would vouch for the marker at the next restart.
				if !h.puts(k) || recorded[k] && h.sched.GetValueStatus(k).State != kvscheduler.Configured {
					absent = append(absent, k)
				}
			}
			want := strings.Join(absent, ",")
			if err := h.patchHeldWithout(ctx, live, want); err != nil {
				err = fmt.Errorf("cannot record on %s that it is held without %q: %w", o.label, want, err)
				if refusedForGood(err) {
					refused[ownerKey] = errors.Join(refused[ownerKey], err) // that owner's failure (see recordrefused.go)
					continue
				}
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// recordedWithout returns the markers AnnotationHeldWithout of obj lists.
func recordedWithout(obj runtime.Object) map[string]bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for k := range strings.SplitSeq(m.GetAnnotations()[AnnotationHeldWithout], ",") {
		if k != "" {
			out[k] = true
		}
	}
	return out
}

// managedByUs tells whether obj carries this registration's managed-by
// label: only such objects are the registration's to annotate.
func (h *loopHandler[T]) managedByUs(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetLabels()[kubedescriptor.LabelManagedBy] == h.fieldManager
}

// patchHeldWithout sets AnnotationHeldWithout of live to want, unless it
// is so already.
func (h *loopHandler[T]) patchHeldWithout(ctx context.Context, live runtime.Object, want string) error {
	m, err := meta.Accessor(live)
	if err != nil {
		return err
	}
	if m.GetAnnotations()[AnnotationHeldWithout] == want {
		return nil
	}
	gvk, err := h.build.gvk(live)
	if err != nil {
		return err
	}
	return h.patch(ctx, gvk, m.GetNamespace(), m.GetName(), m.GetUID(), want)
}

// othersMarkers returns, sorted, the owner and latched markers of this
// registration that v, a held value, names in its depends-on annotation.
func (h *loopHandler[T]) othersMarkers(v any) []string {
	m, err := meta.Accessor(v)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range kubedescriptor.DependsOnKeys(m) {
		_, owner := h.k.ownerOf(k)
		_, available := h.k.availableOf(k)
		if owner || available {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// puts tells whether the desired state of the owner a marker (owner or
// latched) stands for puts it.
func (h *loopHandler[T]) puts(markerKey string) bool {
	owner, ok := h.k.ownerOf(markerKey)
	if !ok {
		owner, _ = h.k.availableOf(markerKey)
	}
	d := h.desired[owner]
	return d != nil && hasValue(d, markerKey)
}

// putsAll tells whether every marker of markerKeys is put.
func (h *loopHandler[T]) putsAll(markerKeys []string) bool {
	for _, k := range markerKeys {
		if !h.puts(k) {
			return false
		}
	}
	return true
}

// heldWithout returns the markers obj's AnnotationHeldWithout lists.
func heldWithout(m metav1.Object) map[string]bool {
	out := map[string]bool{}
	for _, k := range strings.Split(m.GetAnnotations()[AnnotationHeldWithout], ",") {
		if k = strings.TrimSpace(k); k != "" {
			out[k] = true
		}
	}
	return out
}

// clearHeldWithout sets AnnotationHeldWithout of m, an object its owner's
// handler computed, empty when live, the object on the server, lists a
// marker: the forced apply takes the annotation over from
// heldWithoutManager, and the object, applied, is evidence again.
func clearHeldWithout(m metav1.Object, live runtime.Object) {
	if live == nil {
		return
	}
	lm, err := meta.Accessor(live)
	if err != nil || lm.GetAnnotations()[AnnotationHeldWithout] == "" {
		return
	}
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationHeldWithout] = ""
	m.SetAnnotations(a)
}
