package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Conditional writes: every apply of a set's object is conditional on the
// object being as the set read and checked it (see claimed), so that an
// object made, replaced or taken out of the set between the read and the
// write is not taken over.

// createOnly is the resourceVersion precondition of an apply body for an
// object the set read as absent. No object has it (resourceVersions are
// etcd revisions, int64s; this is the largest uint64), so the API server
// answers Conflict when someone made the object between the set's read and
// its write, instead of the apply taking that object over; an apply that
// creates the object ignores the resourceVersion.
const createOnly = "18446744073709551615"

// createFailed returns the error of an apply that was to create d's
// object: when someone made the object meanwhile (the Conflict of
// createOnly), the refusal that object gets (NotManagedError,
// ClaimedError), or else the Conflict, so that the next Apply reads it.
func (a *Applier) createFailed(ctx context.Context, id *setIdentity, d desired, err error) error {
	if !apierrors.IsConflict(err) {
		return err
	}
	live, _, newErr := a.clients.NewObjects(d.key.GVK)
	if newErr != nil {
		return errors.Join(err, newErr)
	}
	if getErr := d.client.Get(ctx, d.key.Namespace, d.key.Name, live, metav1.GetOptions{}); getErr == nil {
		if claimErr := id.claimed(d.key, live); claimErr != nil {
			return claimErr
		}
	}
	return fmt.Errorf("made by someone else since it was read: %w", err)
}

// applyBody is d's apply patch, conditional on the object being as the set
// read and checked it: its resourceVersion when it existed (an object
// changed meanwhile gives a Conflict, and the next Apply checks it again),
// createOnly when it did not. The set's owner reference gives up being the
// controller when the live object already has another controller that
// this apply keeps: the API server allows only one, and that reference is
// another writer's. A controller reference only the set's field manager
// wrote and the set no longer names (an earlier owner of the same name, a
// set's owner created again) goes with this apply, so the set's owner
// takes its place rather than leaving the object with no controller.
func (a *Applier) applyBody(d desired, live runtime.Object, exists bool) ([]byte, error) {
	obj := d.obj.DeepCopy()
	obj.SetResourceVersion(createOnly)
	if exists {
		m, err := meta.Accessor(live)
		if err != nil {
			return nil, err
		}
		obj.SetResourceVersion(m.GetResourceVersion())
		ref := metav1.GetControllerOfNoCopy(m)
		if d.ownerUID != "" && ref != nil && ref.UID != d.ownerUID && a.refKept(m, obj, ref.UID) {
			refs := obj.GetOwnerReferences()
			for i := range refs {
				if refs[i].UID == d.ownerUID {
					refs[i].Controller = nil
				}
			}
			obj.SetOwnerReferences(refs)
		}
	}
	return json.Marshal(obj.Object)
}

// refKept reports whether live's owner reference uid is still there after
// the apply of body: server-side apply removes a field its applier owned
// and now leaves out only when no other field manager owns it too. So the
// reference stays when body names it, when the set's field manager did not
// apply it, or when another manager (or the set's manager through an
// update rather than an apply) owns it as well.
func (a *Applier) refKept(live metav1.Object, body *unstructured.Unstructured, uid types.UID) bool {
	for _, ref := range body.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	key := fmt.Sprintf(`k:{"uid":%q}`, uid)
	ours, others := false, false
	for _, entry := range live.GetManagedFields() {
		owns, err := ownsRef(entry, key)
		if err != nil {
			return true // whose it is cannot be told: assume it stays
		}
		if !owns {
			continue
		}
		if entry.Manager == a.opts.FieldManager && entry.Operation == metav1.ManagedFieldsOperationApply {
			ours = true
		} else {
			others = true
		}
	}
	return !ours || others
}

// ownsRef reports whether entry owns the owner reference whose list key
// (in managedFields' fieldsV1) is key.
func ownsRef(entry metav1.ManagedFieldsEntry, key string) (bool, error) {
	if entry.FieldsV1 == nil {
		return false, nil
	}
	var fields struct {
		Metadata struct {
			OwnerReferences map[string]json.RawMessage `json:"f:ownerReferences"`
		} `json:"f:metadata"`
	}
	if err := json.Unmarshal(entry.FieldsV1.Raw, &fields); err != nil {
		return false, err
	}
	_, ok := fields.Metadata.OwnerReferences[key]
	return ok, nil
}
