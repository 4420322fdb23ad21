package apply

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// applyOne applies one object (or dry-runs it) and says what changed.
func (a *Applier) applyOne(ctx context.Context, id *setIdentity, set Set, d desired, dryRun bool) (string, error) {
	// The kind's client decodes into its Go type (or unstructured for
	// kinds outside the scheme), so results are read through accessors.
	before, _, err := a.clients.NewObjects(d.key.GVK)
	if err != nil {
		return "", err
	}
	after := before.DeepCopyObject()
	err = d.client.Get(ctx, d.key.Namespace, d.key.Name, before, metav1.GetOptions{})
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	if exists {
		// Another set's object stays that set's, and one that belongs
		// to no set stays its manager's: applying it would drop what
		// only the other set applied (one field manager applies every
		// set), or take over fields someone else set, and let this
		// set's pruning delete it.
		if err := id.claimed(d.key, before); err != nil {
			return "", err
		}
	}
	body, err := a.applyBody(d, before, exists)
	if err != nil {
		return "", err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: a.opts.FieldManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := d.client.Patch(ctx, d.key.Namespace, d.key.Name, types.ApplyPatchType, body, after, opts); err != nil {
		if !exists {
			return "", a.createFailed(ctx, id, d, err)
		}
		// Only the set's own object is recreated: one it is adopting
		// (no set's label yet) is still someone else's, not to be
		// deleted.
		if !mayRecreate(set, d.key.GVK.GroupKind(), err) || !inASet(before) {
			return "", err
		}
		if dryRun {
			return "recreate", nil
		}
		return "recreate", a.recreate(ctx, id, d, before, after, opts, err)
	}
	if !exists {
		return "create", nil
	}
	if dryRun {
		if sameContent(before, after) {
			return "unchanged", nil
		}
		return "update", nil
	}
	if resourceVersion(before) != resourceVersion(after) {
		return "update", nil
	}
	return "unchanged", nil
}

// inASet reports whether obj carries a set's label; for an object claimed
// passed, the set's own or one it takes over.
func inASet(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetLabels()[LabelSet] != ""
}

func resourceVersion(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}

// sameContent compares what a dry run would store with what is stored,
// ignoring the fields the server moves on every write.
func sameContent(a, b runtime.Object) bool {
	strip := func(obj runtime.Object) ([]byte, error) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetManagedFields(nil)
		u.SetResourceVersion("")
		u.SetGeneration(0)
		return json.Marshal(u.Object)
	}
	ja, errA := strip(a)
	jb, errB := strip(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
