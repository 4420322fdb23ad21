package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
// controller when the live object already has another controller: the API
// server allows only one, and that reference is another writer's.
func applyBody(d desired, live runtime.Object, exists bool) ([]byte, error) {
	obj := d.obj.DeepCopy()
	obj.SetResourceVersion(createOnly)
	if exists {
		m, err := meta.Accessor(live)
		if err != nil {
			return nil, err
		}
		obj.SetResourceVersion(m.GetResourceVersion())
		if ref := metav1.GetControllerOfNoCopy(m); d.ownerUID != "" && ref != nil && ref.UID != d.ownerUID {
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
