package apply

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// prepareAll prepares every object of a set, and returns them with the
// kinds and namespaces they are in; any object that cannot be prepared
// fails the whole set (the errors are joined).
func (a *Applier) prepareAll(id *setIdentity, set Set, objs []runtime.Object) ([]desired, inventory, error) {
	want := make([]desired, 0, len(objs))
	kinds := inventory{}
	var errs []error
	for _, obj := range objs {
		d, err := a.prepare(id, set, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		want = append(want, d)
		kinds.add(d.key.GVK.GroupKind(), d.key.Namespace)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return want, kinds, nil
}

// prepare turns obj into an apply body carrying the set's label, annotations
// and owner reference.
func (a *Applier) prepare(id *setIdentity, set Set, obj runtime.Object) (desired, error) {
	gvk, err := a.clients.GVKForObject(obj)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %w", err)
	}
	c, err := a.clients.ForKind(gvk)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %w", err)
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %s: %w", gvk.Kind, err)
	}
	u.SetGroupVersionKind(gvk)
	u.SetResourceVersion("")
	u.SetManagedFields(nil)
	if u.GetName() == "" {
		return desired{}, fmt.Errorf("apply: a %s has no name", gvk.Kind)
	}
	if c.Namespaced() && u.GetNamespace() == "" {
		if id.owner == nil || id.owner.GetNamespace() == "" {
			return desired{}, fmt.Errorf("apply: %s %s has no namespace and no namespaced owner to take it from", gvk.Kind, u.GetName())
		}
		u.SetNamespace(id.owner.GetNamespace())
	}
	if !c.Namespaced() {
		u.SetNamespace("")
	}
	if id.owner != nil && id.owner.GetNamespace() != "" {
		if !c.Namespaced() && set.ClusterScopedRefused {
			return desired{}, fmt.Errorf("apply: cluster-scoped %s %s of namespaced owner %s refused (allow cluster-scoped children to apply it)", gvk.Kind, u.GetName(), id.ownerDesc)
		}
		if c.Namespaced() && u.GetNamespace() != id.owner.GetNamespace() && set.OwnerNamespaceOnly {
			return desired{}, fmt.Errorf("apply: %s %s/%s is outside the namespace of its owner %s (allow cross-namespace children to apply it)", gvk.Kind, u.GetNamespace(), u.GetName(), id.ownerDesc)
		}
	}
	ownerUID := mark(id, set, u)
	key := ObjectKey{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()}
	return desired{key: key, client: c, obj: u, ownerUID: ownerUID}, nil
}

// mark puts the set's label and annotations on u and, where Kubernetes
// honours it, the owner reference; it returns the owner's UID when that
// reference was made the controller reference.
func mark(id *setIdentity, set Set, u *unstructured.Unstructured) (ownerUID types.UID) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelSet] = id.hash
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationSetID] = id.id
	if id.owner != nil {
		annotations[AnnotationOwner] = id.ownerDesc
		if id.ownerUID != "" {
			annotations[AnnotationOwnerUID] = string(id.ownerUID)
		}
		// Kubernetes only honours owner references to cluster-scoped
		// owners or owners in the object's own namespace.
		// The set's reference joins the ones the object carries (the
		// caller meant those too), replacing one with the same UID.
		if !set.NoOwnerReference && id.owner.GetUID() != "" && (id.ownerScoped || id.owner.GetNamespace() == u.GetNamespace()) {
			refs := slices.DeleteFunc(u.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
				return ref.UID == id.owner.GetUID()
			})
			ref := metav1.OwnerReference{
				APIVersion: id.ownerGVK.GroupVersion().String(),
				Kind:       id.ownerGVK.Kind,
				Name:       id.owner.GetName(),
				UID:        id.owner.GetUID(),
			}
			// The owner controls the object (metav1.GetControllerOf
			// finds it) unless the caller named another controller;
			// applyOne also yields to one set on the live object.
			if !slices.ContainsFunc(refs, isController) {
				ref.Controller = ptr.To(true)
				ownerUID = ref.UID
			}
			u.SetOwnerReferences(append(refs, ref))
		}
	}
	u.SetAnnotations(annotations)
	return ownerUID
}

func isController(ref metav1.OwnerReference) bool { return ref.Controller != nil && *ref.Controller }

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// Typed objects carry zero values the apply would claim ownership of.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}
