package apply_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// The set's owner is the controller of its objects, so
// metav1.GetControllerOf finds it.
func TestOwnerIsController(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "ctl"}, cm("child", "1")); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller of the child: %+v, want the owner", ref)
	}
}

// An object that another writer made the controller of keeps that
// controller (the server allows one) and the set's owner is added as a
// plain owner; references others added to the live object stay on re-apply.
// The object is made by that other writer, so the set adopts it explicitly
// (AdoptKinds): without it the set would refuse it (NotManagedError).
func TestOwnerYieldsToAnotherController(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	other, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("other-owner", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	third, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("third-owner", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := cm("child", "0")
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID, Controller: ptr.To(true)}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := apply.Set{Owner: owner, ID: "ctl", AdoptKinds: []schema.GroupKind{{Kind: "ConfigMap"}}}
	if err := a.Apply(ctx, set, cm("child", "1")); err != nil {
		t.Fatalf("apply to an object with another controller: %v", err)
	}
	// A handler-unrelated writer adds a reference to the live object.
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.OwnerReferences = append(got.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: third.Name, UID: third.UID})
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("child", "2")); err != nil {
		t.Fatal(err)
	}
	got, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != other.UID {
		t.Fatalf("controller: %+v, want the other writer's", ref)
	}
	uids := map[types.UID]bool{}
	for _, ref := range got.OwnerReferences {
		uids[ref.UID] = true
	}
	if len(uids) != 3 || !uids[owner.UID] || !uids[third.UID] {
		t.Fatalf("owner references %+v, want the controller's, the set owner's and the third writer's", got.OwnerReferences)
	}
}

// NoOwnerReference writes no owner reference, and the set still prunes
// what leaves it.
func TestNoOwnerReferenceStillPrunes(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "norefs", NoOwnerReference: true}
	if err := a.Apply(ctx, set, cm("a", "1"), cm("b", "1")); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 0 {
		t.Fatalf("owner references with NoOwnerReference: %+v", got.OwnerReferences)
	}
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); err == nil {
		t.Fatal("b left a set without owner references and was not pruned")
	}
}
