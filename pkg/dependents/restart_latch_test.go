package dependents_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// Readiness across a restart (before.go): what the live objects show of
// the markers put before it is inherited, and nothing more.

// stopAndWait ends a registration started on ctx (stop cancels it) and
// waits until it stopped.
func stopAndWait(t *testing.T, stop context.CancelFunc, d *dependents.Dependents) {
	t.Helper()
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerCreatedAgainWhileStoppedDoesNotInheritTheLatch: a was
// available (latched) and b's ConfigMap RequiresOwnerAvailable a. While
// no replica runs, a is deleted and created again under its name: another
// owner, never available. Its name's latch is not inherited from what b's
// ConfigMap shows: b's ConfigMap is deleted and waits for the new a. Two
// things keep it so: the old owner's StatefulSet names the old UID, so
// the new a keeps no object from before the restart (before.go), and the
// new a's available marker is ordered after its objects, which do not
// exist yet (its StatefulSet is the old owner's, deleted by the first
// resync). Either alone keeps this test green.
func TestOwnerCreatedAgainWhileStoppedDoesNotInheritTheLatch(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).
				RequiresOwnerAvailable(ns, "a")}, nil
		}
		labels := map[string]string{"app": "a-db"}
		return []*dependents.Object{dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a-db"},
			Spec: appsv1.StatefulSetSpec{ServiceName: "a-db", Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, "postgres:17")}})}, nil
	}
	fm := "restart-recreatedlatch"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's StatefulSet", func() bool { return exists(t, "StatefulSet", ns, "a-db") })
	setDBReady(t, ns, "a-db", 1)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is available", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	stopAndWait(t, stop, d)
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the old a gone", func() bool {
		_, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		return err != nil
	})
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "b's ConfigMap deleted: the new a was never available", func() bool {
		return advConfigMap(t, ns, "b-cm") == nil
	})
	controlplanetest.Eventually(t, wait, "b waiting for the new a", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "b"), "waiting for WebApp "+ns+"/a to be available")
	})
}
