package apply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// Sets with an owner were hashed with the owner's version before identities
// dropped it. The first Apply after the upgrade takes such a set over: it
// prunes the objects labelled with the old hash that are no longer wanted,
// relabels the rest, and removes the old inventory, instead of orphaning them.
func TestSetHashedWithOwnerVersionIsTakenOver(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	legacy := legacyHash("v1/ConfigMap "+ns+"/"+owner.Name, "old")
	// Written by the operator's field manager, as the old set's objects
	// were: only what the applier's manager wrote is pruned.
	for _, name := range []string{"keep", "stale"} {
		obj := cm(name, "1")
		obj.Labels = map[string]string{apply.LabelSet: legacy}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: "test-operator"}); err != nil {
			t.Fatal(err)
		}
	}
	inv := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "lariat-set-" + legacy[:20], Labels: map[string]string{apply.LabelInventory: legacy}},
		Data:       map[string]string{"kinds": "/v1/ConfigMap"},
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, inv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "old"}, cm("keep", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "stale", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an object of the set under its old hash was not pruned: %v", err)
	}
	kept, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Labels[apply.LabelSet] == legacy || kept.Data["v"] != "2" {
		t.Fatalf("kept object not taken over: label %q, data %v", kept.Labels[apply.LabelSet], kept.Data)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, inv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the old inventory is left behind: %v", err)
	}
}
