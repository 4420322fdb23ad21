package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ErrRecreatePending is returned (wrapped) when an object being recreated
// was deleted but is still there (finalizers, or foreground deletion of its
// dependents): the next Apply creates it once it is gone. Handlers return
// it to be retried.
var ErrRecreatePending = errors.New("the object is still being deleted")

// mayRecreate reports whether the set allows recreating an object of gk
// whose apply failed with err. Only an object rejected for immutable fields
// alone is recreated, whichever option allows it: one rejected for another
// reason would be rejected again when created, and deleting it would lose
// it.
func mayRecreate(set Set, gk schema.GroupKind, err error) bool {
	if !apierrors.IsInvalid(err) || !onlyImmutable(err) {
		return false
	}
	return set.RecreateImmutable || slices.Contains(set.RecreateKinds, gk)
}

// onlyImmutable reports whether every cause of an Invalid error is a field
// that cannot change once set. The API server's validation words these
// "field is immutable" (apimachinery's ValidateImmutableField, and "...
// when `immutable` is set" for immutable ConfigMaps and Secrets), "may not
// change once set", or forbids a change with a message that says
// "immutable" (a bound claim's spec). A cause's message is its type, then,
// for Invalid and most other types, the rejected value, then the reason:
// the phrases are matched where the reason is (at the end, or anywhere in a
// Forbidden cause, which echoes no value), never in the value, which can
// say anything ("immutable:flag", a key that is simply invalid).
func onlyImmutable(err error) bool {
	immutable := func(msg string) bool {
		for _, reason := range []string{"field is immutable", "field is immutable when `immutable` is set", "may not change once set"} {
			if strings.HasSuffix(msg, reason) {
				return true
			}
		}
		return strings.HasPrefix(msg, "Forbidden: ") && strings.Contains(msg, "immutable")
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	if details == nil || len(details.Causes) == 0 {
		return immutable(status.Status().Message)
	}
	for _, cause := range details.Causes {
		if !immutable(cause.Message) {
			return false
		}
	}
	return true
}

// recreate deletes the live object and applies d again, which creates it.
// The delete is preconditioned on the live object's UID and resourceVersion:
// it deletes the object only as the set read and checked it (an object
// recreated by someone else, or taken out of the set meanwhile, is spared
// and the next Apply checks it again). An object that is still there after
// the delete gives ErrRecreatePending; one made again meanwhile is applied
// only if the set may (a *ClaimedError or *NotManagedError otherwise), and
// the create is create-only, as in applyOne.
func (a *Applier) recreate(ctx context.Context, id *setIdentity, d desired, live runtime.Object, into runtime.Object, opts metav1.PatchOptions, cause error) error {
	m, err := meta.Accessor(live)
	if err != nil {
		return err
	}
	uid, rv := m.GetUID(), m.GetResourceVersion()
	background := metav1.DeletePropagationBackground
	err = d.client.Delete(ctx, d.key.Namespace, d.key.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("recreate after %v: delete: %w", cause, err)
	}
	check, _, err := a.clients.NewObjects(d.key.GVK)
	if err != nil {
		return err
	}
	err = d.client.Get(ctx, d.key.Namespace, d.key.Name, check, metav1.GetOptions{})
	exists := err == nil
	if exists {
		if cm, mErr := meta.Accessor(check); mErr == nil && cm.GetUID() == uid {
			return fmt.Errorf("recreate: %w", ErrRecreatePending)
		}
		// Made again meanwhile: apply to it, only if the set may.
		if err := id.claimed(d.key, check); err != nil {
			return fmt.Errorf("recreate: %w", err)
		}
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("recreate: %w", err)
	}
	body, err := a.applyBody(d, check, exists)
	if err != nil {
		return err
	}
	if err := d.client.Patch(ctx, d.key.Namespace, d.key.Name, types.ApplyPatchType, body, into, opts); err != nil {
		if !exists {
			err = a.createFailed(ctx, id, d, err)
		}
		return fmt.Errorf("recreate: create: %w", err)
	}
	return nil
}
