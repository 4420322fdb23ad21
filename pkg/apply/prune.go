package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// objectID is an object's identity: group, kind, namespace and name. The
// version is left out on purpose: the same object read through two versions
// is one object, and keying by version would prune what was just applied
// through another.
type objectID struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func idOf(k ObjectKey) objectID {
	return objectID{gk: k.GVK.GroupKind(), namespace: k.Namespace, name: k.Name}
}

// prune deletes (or, dry-running, lists) the set's objects of one kind that
// are not kept. It lists the kind once, through its preferred served
// version.
func (a *Applier) prune(ctx context.Context, id *setIdentity, gk schema.GroupKind, keep map[objectID]bool, dryRun bool) ([]ObjectKey, error) {
	c, err := a.clients.ForKind(gk.WithVersion(""))
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil // the kind is gone from the cluster, and its objects with it
		}
		return nil, fmt.Errorf("prune %s: %w", gk, err)
	}
	gvk := c.GroupVersionKind()
	_, list, err := a.clients.NewObjects(gvk)
	if err != nil {
		return nil, fmt.Errorf("prune %s: %w", gk, err)
	}
	if err := c.List(ctx, metav1.NamespaceAll, list, metav1.ListOptions{LabelSelector: LabelSet + "=" + id.hash}); err != nil {
		return nil, fmt.Errorf("prune %s: %w", gk, err)
	}
	var deleted []ObjectKey
	var errs []error
	err = meta.EachListItem(list, func(item runtime.Object) error {
		m, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		key := ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
		if keep[idOf(key)] {
			return nil
		}
		deleted = append(deleted, key)
		if dryRun {
			return nil
		}
		// The UID precondition spares an object recreated under the
		// same name since the list.
		uid := m.GetUID()
		background := metav1.DeletePropagationBackground
		err = c.Delete(ctx, key.Namespace, key.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("prune %s: %w", key, err))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return deleted, errors.Join(errs...)
}
