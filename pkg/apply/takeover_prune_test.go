package apply_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// A set that took over another set of its owner (a renamed generating
// handler) leaves that set's other objects alone while the owner lives:
// another handler may still hold them. Pruned whole because the owner is
// gone (Set.OwnerKey), it prunes the sets it takes over with it, objects
// and inventories, so nothing of the owner's sets outlives it.
func TestGoneOwnersSetPrunesTheSetsItTookOver(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	cms := kube.CoreV1().ConfigMaps(ns)
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "old-name", NoOwnerReference: true}, cm("child", "1"), cm("leftover", "1")); err != nil {
		t.Fatal(err)
	}
	renamed := apply.Set{Owner: owner, ID: "new-name", NoOwnerReference: true, TakeOver: []string{"old-name"}}
	if err := a.Apply(ctx, renamed, cm("child", "2")); err != nil {
		t.Fatal(err)
	}
	key := &apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: owner.Name}
	gone := apply.Set{OwnerKey: key, ID: "new-name", NoOwnerReference: true, TakeOver: []string{"old-name"}}
	if err := a.Apply(ctx, gone); !errors.Is(err, apply.ErrOwnerExists) {
		t.Fatalf("pruning the sets of a live owner: %v, want ErrOwnerExists", err)
	}
	for _, name := range []string{"child", "leftover"} {
		if _, err := cms.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s of a live owner: %v", name, err)
		}
	}

	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, err := a.DryRun(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(plan.Delete); !slices.Equal(got, []string{"ConfigMap/child", "ConfigMap/leftover"}) {
		t.Errorf("a dry run for the gone owner would delete %v, want its child and the old set's leftover", got)
	}
	if err := a.Apply(ctx, gone); err != nil {
		t.Fatalf("pruning the sets of a gone owner: %v", err)
	}
	for _, name := range []string{"child", "leftover"} {
		if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s outlived its owner: %v", name, err)
		}
	}
	inventories, err := cms.List(ctx, metav1.ListOptions{LabelSelector: apply.LabelInventory})
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range inventories.Items {
		t.Errorf("inventory %s (set %q) outlived its owner", inv.Name, inv.Annotations[apply.AnnotationSetID])
	}
}
