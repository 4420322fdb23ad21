package kubedescriptor

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
)

// Writes: Create and Update apply the value with a server-side apply;
// Delete is conditional on the UID the object had.

// create applies a value the scheduler believes does not exist. An object
// of that name that this field manager did not create is not taken over
// (unless Options.Adopt): the cache cannot tell, since it holds only
// managed objects, so the server is asked. The apply is conditional on
// what it read (see write): read as absent, it only creates (createOnly),
// so that a fenced config (package leader) stamps it with its term and an
// object made meanwhile is not taken over; read as present, Adopt or not,
// it carries the object's UID and resourceVersion, so it cannot create
// the object once it is gone.
func (k *kind) create(ctx context.Context, key string, value any) (any, error) {
	return k.write(ctx, key, value, nil, k.opts.Adopt, "")
}

// createOnly is the resourceVersion of an apply that only creates, as
// pkg/apply's: no object has it (the largest uint64; resourceVersions are
// etcd revisions), so the API server answers Conflict when the object
// exists, and creates it otherwise. Package leader's fence stamps such an
// apply with its term, which the term policy refuses once the term is
// over; an apply without it is not stamped.
const createOnly = "18446744073709551615"

// getLive reads the object at key from the API server; nil when there is
// none.
func (k *kind) getLive(ctx context.Context, key string) (metav1.Object, error) {
	ref, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	c, err := k.opts.Clients.ForKind(k.gvk)
	if err != nil {
		return nil, err
	}
	live, _, err := k.opts.Clients.NewObjects(k.gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	if err := c.Get(ctx, ref.Namespace, ref.Name, live, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return meta.Accessor(live)
}

// applyVersioned applies value, with the UID uid and the resourceVersion
// precondition version in the apply body ("" for none), and remembers
// what the server made of it, for drift (see appliedState). Its metadata
// is the object's UID, which deletes use as a precondition.
func (k *kind) applyVersioned(ctx context.Context, key string, value any, uid types.UID, version string) (any, error) {
	result, err := k.patchVersioned(ctx, key, value, false, uid, version)
	if err != nil {
		return nil, err
	}
	st := newAppliedState(result, value, k.opts.FieldManager)
	if st != nil {
		// What the apply stored, at its resourceVersion: later versions
		// are someone else's writes (see outside.go).
		if m, err := meta.Accessor(result); err == nil {
			st.syncedAt = m.GetResourceVersion()
		}
	}
	k.applied.put(key, st)
	k.opts.Landings.record(key, result, st)
	return uidOf(result), nil
}

// patch server-side applies value with the descriptor's field manager,
// forcing ownership of the fields it sets, as pkg/apply does; dryRun only
// asks the server what the apply would store. It returns the object the
// server stored (or would store).
func (k *kind) patch(ctx context.Context, key string, value any, dryRun bool) (runtime.Object, error) {
	return k.patchVersioned(ctx, key, value, dryRun, "", "")
}

// patchVersioned is patch with the UID uid and the resourceVersion
// precondition version in the apply body ("" for none). With a UID the
// apply cannot create: the API server answers Conflict when no object of
// the name exists.
func (k *kind) patchVersioned(ctx context.Context, key string, value any, dryRun bool, uid types.UID, version string) (runtime.Object, error) {
	obj, ok := value.(runtime.Object)
	if !ok || isNil(value) {
		return nil, fmt.Errorf("kubedescriptor: value of %s is %T", key, value)
	}
	gvk, err := k.opts.Clients.GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	c, err := k.opts.Clients.ForKind(gvk)
	if err != nil {
		return nil, err
	}
	u, err := k.applyBody(obj, gvk)
	if err != nil {
		return nil, err
	}
	if version != "" {
		u.SetResourceVersion(version)
	}
	if uid != "" {
		u.SetUID(uid)
	}
	switch {
	case c.Namespaced() && u.GetNamespace() == "":
		return nil, fmt.Errorf("kubedescriptor: %s is namespaced but %s has no namespace", gvk.Kind, key)
	case !c.Namespaced() && u.GetNamespace() != "":
		return nil, fmt.Errorf("kubedescriptor: %s is cluster-scoped but %s has a namespace", gvk.Kind, key)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	result, _, err := k.opts.Clients.NewObjects(gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	force := true
	opts := metav1.PatchOptions{FieldManager: k.opts.FieldManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := c.Patch(ctx, u.GetNamespace(), u.GetName(), types.ApplyPatchType, body, result, opts); err != nil {
		return nil, err
	}
	return result, nil
}

// applyBody is what patch sends for obj: the object without what the
// server maintains, with the management label and the stamp of
// authorship (see AnnotationAppliedAs).
func (k *kind) applyBody(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u.SetGroupVersionKind(gvk)
	lbls := u.GetLabels()
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[LabelManagedBy] = k.opts.FieldManager
	u.SetLabels(lbls)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationAppliedAs] = appliedAs(k.opts.FieldManager, KeyFor(gvk, u.GetNamespace(), u.GetName()))
	u.SetAnnotations(annotations)
	return u, nil
}

// toUnstructured converts obj into an apply body. Typed objects carry zero
// values (creationTimestamp, an empty status) the apply would otherwise
// claim ownership of; the server-maintained metadata must not be sent.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	if x, ok := obj.(*unstructured.Unstructured); ok {
		u = x.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u = &unstructured.Unstructured{Object: m}
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	for _, f := range []string{"resourceVersion", "managedFields", "uid", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u, nil
}

// delete deletes the object the scheduler knows, with its dependents in
// the background (or Options.PropagationPolicy). The delete is conditional
// on the UID the object had when it was applied or retrieved: an object
// replaced since, under the same name, is someone else's and stays. It is
// conditional on its resourceVersion too (as the descriptor's last apply
// left it, or as read): a delete held in the network past its term then
// conflicts with the next leader's write instead of deleting what it
// wants; a Conflict is retried by a fresh read (see write). An object
// already gone is what was wanted.
func (k *kind) delete(ctx context.Context, key string, _ any, md any) error {
	ref, err := ParseKey(key)
	if err != nil {
		return err
	}
	c, err := k.opts.Clients.ForKind(k.gvk)
	if err != nil {
		return err
	}
	uid, _ := md.(types.UID)
	policy := metav1.DeletePropagationBackground
	if k.opts.PropagationPolicy != nil {
		policy = *k.opts.PropagationPolicy
	}
	for attempt := 0; ; attempt++ {
		tgt, err := k.deleteTarget(ctx, key, uid, attempt > 0)
		if err != nil {
			return err
		}
		if tgt != nil {
			err = k.deleteAt(ctx, c, ref, tgt, policy)
		}
		switch {
		case tgt == nil || err == nil || apierrors.IsNotFound(err):
			// Gone, or replaced by another object of the same name:
			// either way the one this value stood for no longer exists.
			k.applied.put(key, nil)
			k.opts.Landings.forget(key)
			return nil
		case !apierrors.IsConflict(err) || attempt+1 >= writeAttempts:
			return err
		}
	}
}

// deleteAt deletes the object ref conditional on tgt.
func (k *kind) deleteAt(ctx context.Context, c *client.Client, ref ObjectRef, tgt *target, policy metav1.DeletionPropagation) error {
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	return c.Delete(ctx, ref.Namespace, ref.Name, metav1.DeleteOptions{Preconditions: tgt.preconditions(), PropagationPolicy: &policy})
}

// uidOf returns obj's UID, or nil when it has none.
func uidOf(obj runtime.Object) any {
	if m, err := meta.Accessor(obj); err == nil && m.GetUID() != "" {
		return m.GetUID()
	}
	return nil
}
