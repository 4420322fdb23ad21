package apply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// A set written by an older Lariat, whose hash included the version its
// owner was read through (here autoscaling/v2), is taken over by the first
// Apply after the upgrade whatever version the owner is read through now
// (here autoscaling/v1): "Objects a set made before ... (labelled with its
// hash, or its legacy hash ...) are still the set's: applied and pruned as
// before". The child it still names is applied (the annotations say whose
// it is); the child it no longer names must be pruned and the old
// inventory removed, as when the owner is read through the same version
// (TestSetHashedWithOwnerVersionIsTakenOver). Today neither the legacy
// selector nor the legacy inventory name covers another version: the
// stale child and the old inventory stay for good.
func TestOldSetOfAnotherOwnerVersionIsPrunedAsBefore(t *testing.T) {
	a, kube, ns, _ := setup(t)
	ctx := t.Context()
	hpa, asV1 := hpaOwner(t, kube, ns)
	desc := "autoscaling/v2/HorizontalPodAutoscaler " + ns + "/" + hpa.Name
	legacy := legacyHash(desc, "x")
	for _, name := range []string{"keep", "stale"} {
		child := cm(name, "1")
		child.Labels = map[string]string{apply.LabelSet: legacy}
		child.Annotations = map[string]string{apply.AnnotationOwner: desc, apply.AnnotationSetID: "x"}
		// Written by the operator's field manager, as the old set's
		// objects were: only what the applier's manager wrote is pruned.
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, child, metav1.CreateOptions{FieldManager: "test-operator"}); err != nil {
			t.Fatal(err)
		}
	}
	inv := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "lariat-set-" + legacy[:20], Labels: map[string]string{apply.LabelInventory: legacy},
			Annotations: map[string]string{apply.AnnotationOwner: desc, apply.AnnotationSetID: "x"}},
		Data: map[string]string{"kinds": "/v1/ConfigMap"},
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, inv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := a.Apply(ctx, apply.Set{Owner: asV1, ID: "x"}, cm("keep", "2")); err != nil {
		t.Fatal(err)
	}
	if got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{}); err != nil || got.Data["v"] != "2" {
		t.Fatalf("the child the set still names was not applied: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "stale", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old set's child the set no longer names was not pruned: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, inv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old set's inventory is left behind: %v", err)
	}
}
