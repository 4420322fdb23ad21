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
