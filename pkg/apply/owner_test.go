package apply_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// Pruning a whole set because its owner looks gone (Set.OwnerKey, no
// objects) is confirmed with the API server: an owner that still exists
// without a deletion timestamp keeps its children, whatever a filtered
// cache said.
func TestOwnerKeyPruneConfirmsOwnerGone(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "kids"}, cm("kid", "1")); err != nil {
		t.Fatal(err)
	}
	key := &apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: owner.Name}
	gone := apply.Set{OwnerKey: key, ID: "kids"}

	if _, err := a.DryRun(ctx, gone); !errors.Is(err, apply.ErrOwnerExists) {
		t.Fatalf("dry run for a live owner: %v, want ErrOwnerExists", err)
	}
	if err := a.Apply(ctx, gone); !errors.Is(err, apply.ErrOwnerExists) {
		t.Fatalf("apply for a live owner: %v, want ErrOwnerExists", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "kid", metav1.GetOptions{}); err != nil {
		t.Fatalf("the child of a live owner was pruned: %v", err)
	}

	// Being deleted counts as gone.
	owner.Finalizers = []string{"test.lariat.dev/hold"}
	owner, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, owner, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, gone); err != nil {
		t.Fatalf("apply for an owner being deleted: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "kid", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the child of an owner being deleted was not pruned: %v", err)
	}

	// Really gone: pruned too.
	other, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("other-owner", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: other, ID: "kids"}, cm("other-kid", "1")); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, other.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	otherKey := *key
	otherKey.Name = other.Name
	if err := a.Apply(ctx, apply.Set{OwnerKey: &otherKey, ID: "kids"}); err != nil {
		t.Fatalf("apply for a deleted owner: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "other-kid", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the child of a deleted owner was not pruned: %v", err)
	}
}

// The set's owner reference is added to the ones the desired object carries;
// those are what the caller meant to write too, and are kept.
func TestOwnerReferenceAddsToGivenOnes(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	other, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("other-owner", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := cm("child", "1")
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID}}
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "refs"}, child); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]bool{}
	for _, ref := range got.OwnerReferences {
		uids[string(ref.UID)] = true
	}
	if len(got.OwnerReferences) != 2 || !uids[string(owner.UID)] || !uids[string(other.UID)] {
		t.Fatalf("owner references %+v, want the given one and the set owner's", got.OwnerReferences)
	}
}

// An owner is identified by UID as well as name: once the set's owner is
// deleted and another object takes its name without applying the set (one
// a filtered cache never shows the operator), pruning the set for the gone
// owner (Set.OwnerKey) prunes what was applied for it. Once the new owner
// applies the set, the set is that owner's, and the same prune leaves it.
func TestOwnerKeyPruneOfAnOwnerWhoseNameWasTakenAgain(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	cms := kube.CoreV1().ConfigMaps(ns)
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "kids", NoOwnerReference: true}, cm("kid", "1")); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	taken, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner.Name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := &apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: owner.Name}
	gone := apply.Set{OwnerKey: key, ID: "kids", NoOwnerReference: true}
	if err := a.Apply(ctx, gone); err != nil {
		t.Fatalf("pruning the set of a deleted owner whose name another object took: %v", err)
	}
	if _, err := cms.Get(ctx, "kid", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted owner's child outlived it: %v", err)
	}

	if err := a.Apply(ctx, apply.Set{Owner: taken, ID: "kids", NoOwnerReference: true}, cm("new-kid", "2")); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, gone); !errors.Is(err, apply.ErrOwnerExists) {
		t.Errorf("pruning the set its live owner applied: %v, want ErrOwnerExists", err)
	}
	if _, err := cms.Get(ctx, "new-kid", metav1.GetOptions{}); err != nil {
		t.Errorf("the live owner's child: %v", err)
	}
}
