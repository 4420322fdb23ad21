package dependents_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv8OwnerDeletedWithOrphanPropagationHasItsObjectsDeleted: a user
// deletes a WebApp with propagationPolicy Orphan (kubectl delete
// --cascade=orphan), the API's way of saying "delete the owner, keep its
// dependents": the API server puts the "orphan" finalizer on it, the
// garbage collector orphans its dependents and removes the finalizer (the
// test does the collector's part: the test control plane runs none). A
// wrangler generating handler's objects carry owner references, so the
// collector keeps them; Lariat sets none and deletes an owner's objects
// when it goes, whatever the propagation the user asked for, though the
// owner's last state (deletionTimestamp, finalizer "orphan") says it:
// ConfigMap a-data, which the user asked to keep, is deleted.
func TestAdv8OwnerDeletedWithOrphanPropagationHasItsObjectsDeleted(t *testing.T) {
	advOpen(t, "an owner deleted with propagationPolicy Orphan has its objects deleted")
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-data"},
			Data: map[string]string{"image": app.Spec.Image}})}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv8-orphan", kinds, handler)
	advCreateApp(t, webapps, ns, "a", nil)
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "a-data") != nil })

	orphan := metav1.DeletePropagationOrphan
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a marked for orphaning in the cache", func() bool {
		app, err := webapps.Cache().Get(ns, "a")
		return err == nil && app.DeletionTimestamp != nil && slices.Contains(app.Finalizers, metav1.FinalizerOrphanDependents)
	})
	// The garbage collector's part: a-data has no owner reference to
	// remove, so the finalizer goes.
	if _, err := webapps.Patch(t.Context(), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	// z is created after a is gone: once the loop made z's ConfigMap, it
	// processed a's deletion (one informer, one queue, in order).
	controlplanetest.Eventually(t, wait, "the old a gone", func() bool {
		_, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		return err != nil
	})
	advCreateApp(t, webapps, ns, "z", nil)
	controlplanetest.Eventually(t, wait, "z's ConfigMap", func() bool { return advConfigMap(t, ns, "z-data") != nil })
	if advConfigMap(t, ns, "a-data") == nil || slices.Contains(ops(d, kvscheduler.OpDelete), "ConfigMap a-data") {
		t.Errorf("WebApp a was deleted with propagationPolicy Orphan (keep its dependents), yet its ConfigMap a-data was deleted "+
			"(deletes %v)", ops(d, kvscheduler.OpDelete))
	}
}
