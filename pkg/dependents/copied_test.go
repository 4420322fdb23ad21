package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestACopyOfADependentIsNeverPruned: a user copies a registration's
// Secret whole (kubectl get -o yaml keeps every label and annotation: the
// managed-by label, the owner, the stamp of authorship) under a new name.
// Its owner is deleted while no replica runs; the next start's full
// resync deletes the owner's objects and leaves the copy, which no
// registration applied (docs/safety.md, issue 24).
func TestACopyOfADependentIsNeverPruned(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := startCtx(t, ctx)
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "gone", "ordering")
	controlplanetest.Eventually(t, wait, "Secret gone-db", func() bool { return exists(t, "Secret", ns, "gone-db") })
	secrets := controlplanetest.Clientset(cp.Config()).CoreV1().Secrets(ns)
	orig, err := secrets.Get(t.Context(), "gone-db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gone-db-copy", Namespace: ns, Labels: orig.Labels, Annotations: orig.Annotations},
		Type: orig.Type, Data: orig.Data}
	made, err := secrets.Create(t.Context(), cpy, metav1.CreateOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start(t)
	controlplanetest.Eventually(t, wait, "the deleted owner's objects gone", func() bool {
		return !exists(t, "Service", ns, "gone-db") && !exists(t, "StatefulSet", ns, "gone-db") && !exists(t, "Secret", ns, "gone-db")
	})
	got, err := secrets.Get(t.Context(), "gone-db-copy", metav1.GetOptions{})
	if err != nil || got.UID != made.UID || got.ResourceVersion != made.ResourceVersion {
		t.Fatalf("the user's copy gone-db-copy after the full resync that deleted gone-db: %v; want it kept as it was", err)
	}
}
