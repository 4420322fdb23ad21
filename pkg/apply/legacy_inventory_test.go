package apply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// The first Apply after the upgrade that dropped the owner's version from
// the hash takes an old set over and deletes its old inventory once the
// set was applied and pruned. When that first Apply fails for one object
// (here a hand-made object the set names, refused), the new inventory is
// already written; the next, successful, Apply must still delete the old
// inventory. It reads only the new one and never looks at the old one
// again, so the old inventory ConfigMap is left behind for good, in every
// namespace where a set's first Apply after the upgrade failed.
func TestOldInventoryGoesAfterAnInterruptedTakeOver(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	legacy := legacyHash("v1/ConfigMap "+ns+"/"+owner.Name, "old")
	obj := cm("keep", "1")
	obj.Labels = map[string]string{apply.LabelSet: legacy}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inv := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "lariat-set-" + legacy[:20], Labels: map[string]string{apply.LabelInventory: legacy}},
		Data:       map[string]string{"kinds": "/v1/ConfigMap"},
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, inv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	handMadeCM(t, kube, ns, "handmade", nil)

	set := apply.Set{Owner: owner, ID: "old"}
	if err := a.Apply(ctx, set, cm("keep", "2"), cm("handmade", "set")); notManaged(err, "handmade") == nil {
		t.Fatalf("first apply after the upgrade, naming a hand-made object: %v, want its refusal", err)
	}
	if err := a.Apply(ctx, set, cm("keep", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, inv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old inventory %s is left behind after the set was applied and pruned in full: %v", inv.Name, err)
	}
}
