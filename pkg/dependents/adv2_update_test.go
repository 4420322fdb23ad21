package dependents_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// advAppAndProbe is a handler: the app's Deployment (the WebApp's image)
// and, when config "probe" is "true", a ConfigMap "<name>-probe" that
// Requires it.
func advAppAndProbe(app *demov1.WebApp) ([]*dependents.Object, error) {
	labels := map[string]string{"app": app.Name}
	dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, app.Spec.Image)}})
	probe := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-probe"}}).
		Requires(dep).IncludeWhen(app.Spec.Config["probe"] == "true")
	return []*dependents.Object{dep, probe}, nil
}

// TestAdvRequirerCreatedOnTheDeploymentsOldSpec: the Deployment is ready
// at image app:1. One update of the WebApp changes the image to app:2 and
// adds a ConfigMap that Requires the Deployment. The loop judges the
// Deployment's readiness on its picture, which is still the app:1 object
// (every replica available): the ConfigMap is created in the same
// transaction that updates the Deployment, before the Deployment at the
// spec it now has is ready (its controller has not seen generation 2;
// nothing in this test makes it ready again). Once the loop sees the
// updated Deployment (not ready), the ConfigMap is deleted again: a
// requirer created on a stale view, as the IncludeWhen flip was
// (TestAdvIncludeWhenFlipCreatesARequirerOnAStaleView), by a spec update.
func TestAdvRequirerCreatedOnTheDeploymentsOldSpec(t *testing.T) {
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv2-update", kinds, advAppAndProbe)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	controlplanetest.Eventually(t, wait, "a Ready", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ready: Deployment a") &&
			!has(readyMessage(t, webapps, ns, "a"), "pending")
	})

	app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app.Spec.Image = "app:2"
	app.Spec.Config = map[string]string{"probe": "true"}
	if _, err := webapps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	// The loop has seen the updated Deployment (not ready at generation 2).
	controlplanetest.Eventually(t, wait, "the probe waiting for the updated Deployment", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ConfigMap a-probe: waiting for")
	})
	if created := ops(d, kvscheduler.OpCreate); slices.Contains(created, "ConfigMap a-probe") {
		t.Errorf("ConfigMap a-probe, which Requires Deployment a, was created (creates %v) although the Deployment at image app:2 was never ready; deletes %v",
			created, ops(d, kvscheduler.OpDelete))
	}
}
