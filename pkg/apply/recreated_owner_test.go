package apply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// TestStalePassForARecreatedOwnerSparesTheNewOwnersObjects: an owner is
// deleted and created again under the same name (no garbage collector
// runs here, so the old owner's objects stay), and the new owner's set is
// applied: it takes over what it names and prunes the old owner's other
// objects. A late pass by the old owner's object (a stale replica's)
// prunes its whole set, and must leave the new owner's objects, and the
// inventory that points at them, alone.
func TestStalePassForARecreatedOwnerSparesTheNewOwnersObjects(t *testing.T) {
	a, kube, ns, old := setup(t)
	ctx := t.Context()
	cms := kube.CoreV1().ConfigMaps(ns)
	if err := a.Apply(ctx, apply.Set{Owner: old, ID: "kids"}, cm("kid", "1"), cm("old-only", "1")); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recreated, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: old.Name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: recreated, ID: "kids"}, cm("kid", "2"), cm("new-only", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "old-only", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("old-only, the old owner's, was not pruned by the new owner's set: %v", err)
	}

	plan, err := a.DryRun(ctx, apply.Set{Owner: old, ID: "kids"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Delete) > 0 {
		t.Errorf("a stale pass for the old owner would delete %v, the new owner's", names(plan.Delete))
	}
	if err := a.Apply(ctx, apply.Set{Owner: old, ID: "kids"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kid", "new-only"} {
		if _, err := cms.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s, the new owner's, after a stale pass for the old owner: %v", name, err)
		}
	}
	// The inventory still points at the new owner's objects: its next
	// Apply prunes what it no longer names.
	if err := a.Apply(ctx, apply.Set{Owner: recreated, ID: "kids"}, cm("kid", "3")); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "new-only", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("new-only was not pruned once the new owner stopped naming it: %v", err)
	}
}
