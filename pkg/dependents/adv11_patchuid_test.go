package dependents

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv11HeldWithoutPatchOfAnObjectCreatedAgainIsNoError: the
// annotationPatcher's contract (heldwithout.go) is "an object gone is no
// error", and its UID precondition is there because "an object created
// again under the name is not the one held". The API server answers a
// merge patch whose metadata.uid differs with 422 Invalid ("metadata.uid:
// Invalid value: ...: field is immutable"), neither 404 nor 409, and only
// 404 is let through: while the registration's cache still shows the
// object deleted and created again by hand, every update that records a
// held-without aborts (nothing committed) with an error that says nothing
// of the object being created again, until the watch catches up. Fixed:
// that answer means another object holds the name, and the record is not
// written (as for an object gone).
func TestAdv11HeldWithoutPatchOfAnObjectCreatedAgainIsNoError(t *testing.T) {
	cp := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, cp.Config())
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "again"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	patch := newAnnotationPatcher(clients, "adv11-patchuid")
	stale := types.UID("00000000-0000-0000-0000-000000000001") // the UID of the object deleted
	if err := patch(t.Context(), corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "again", stale, "x"); err != nil {
		t.Errorf("patching the held-without record of an object since created again under its name (UID %s, now %s): %v",
			stale, cm.UID, err)
	}
	now, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "again", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := now.Annotations[AnnotationHeldWithout]; ok {
		t.Errorf("the object created again under the name got %s=%q, which was meant for the object deleted", AnnotationHeldWithout, v)
	}
}
