package dependents_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv3RequiresOwnerCreatedOnTheOtherOwnersOldSpec: WebApp a is ready
// (its Deployment, image app:1, every replica available). a's image is
// changed to app:2 and WebApp b, whose Deployment RequiresOwner a, is
// created; the loop gets a's update, then b's creation (the gate, another
// WebApp's handler call, holds the loop meanwhile, as a busy loop would).
// The loop applies a's new image, then computes b while its picture of
// a's Deployment is still the app:1 one: a's readiness markers are still
// put, and b's Deployment is created, although a at the spec it now has
// was never ready; it is deleted again once the loop sees a's updated
// Deployment (generation 2, not seen by its controller). The hold that
// keeps a new requirer of an object its own owner's computation changes
// ("waits for Deployment a to be seen at its new spec",
// TestAdvRequirerCreatedOnTheDeploymentsOldSpec) does not cover a
// requirer of another owner: "Nothing waits on a guess ... another
// owner's readiness (RequiresOwner) included".
func TestAdv3RequiresOwnerCreatedOnTheOtherOwnersOldSpec(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	gate := newAdvGate(t)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if app.Name == "gate" {
			gate.hold()
			return nil, nil
		}
		labels := map[string]string{"app": app.Name}
		dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, app.Spec.Image)}})
		if other := app.Spec.Config["needs"]; other != "" {
			dep.RequiresOwner(app.Namespace, other)
		}
		return []*dependents.Object{dep}, nil
	}
	reg := prometheus.NewRegistry()
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}
	d, webapps := advStart(t, t.Context(), "adv3-crossowner", kinds, handler,
		func(o *dependents.Options) { o.Registerer = reg })
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	controlplanetest.Eventually(t, wait, "a Ready", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ready: Deployment a") &&
			!has(readyMessage(t, webapps, ns, "a"), "pending")
	})
	controlplanetest.Eventually(t, wait, "the loop idle", func() bool { return queueLength(t, reg) == 0 })

	gate.arm()
	advCreateApp(t, webapps, ns, "gate", map[string]string{})
	<-gate.entered // the loop is held
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = "app:2"
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, reg, 1, "a's update")
	advCreateApp(t, webapps, ns, "b", map[string]string{"needs": "a"})
	waitQueued(t, reg, 2, "b's creation")
	gate.open()

	controlplanetest.Eventually(t, wait, "a's Deployment seen at generation 2", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "has not seen generation 2")
	})
	controlplanetest.Eventually(t, wait, "b computed", func() bool { return d.Summary(ns, "b").Known })
	if created := ops(d, kvscheduler.OpCreate); slices.Contains(created, "Deployment b") {
		t.Errorf("Deployment b, which RequiresOwner a, was created (creates %v) although a's Deployment at image app:2 was never ready; deletes %v; a: %q; b: %q",
			created, ops(d, kvscheduler.OpDelete), readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "b"))
	}
}
