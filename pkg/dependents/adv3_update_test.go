package dependents_test

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv3HoldOfANewRequirerEndsOnAnotherWritersVersion: the hold of an
// object put for the first time that Requires an object the same
// computation changes ("waits for Deployment a to be seen at its new
// spec") ends on any resourceVersion of the changed object the loop sees
// next, not on the one its own update made. A Deployment's controller
// writes its status all the time: here it writes one (still generation 1,
// every replica available) just before the loop applies the owner's new
// image, and the loop sees that write after it applied. The hold ends on
// it, the Deployment is judged ready on the generation-1 status, and the
// ConfigMap that Requires it is created although the Deployment at image
// app:2 was never ready; it is deleted again once the loop sees the
// update (generation 2, not seen by its controller). The gate (another
// WebApp's handler call) holds the loop so that the owner's update is
// queued before the status write, the order in which a busy loop gets
// them.
func TestAdv3HoldOfANewRequirerEndsOnAnotherWritersVersion(t *testing.T) {
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
		return advAppAndProbe(app)
	}
	reg := prometheus.NewRegistry()
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv3-update", kinds, handler,
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

	app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app.Spec.Image = "app:2"
	app.Spec.Config = map[string]string{"probe": "true"}
	if _, err := webapps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, reg, 1, "a's update")
	// The Deployment's controller reports on generation 1 (the update is
	// not applied yet): still every replica available.
	kube := controlplanetest.Clientset(cp.Config())
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := kube.AppsV1().Deployments(ns).Get(context.Background(), "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if dep.Generation != 1 {
			t.Fatalf("the Deployment is at generation %d while the loop is held", dep.Generation)
		}
		dep.Status.UpdatedReplicas = 1
		dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable,
			Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"})
		_, err = kube.AppsV1().Deployments(ns).UpdateStatus(context.Background(), dep, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, reg, 2, "the Deployment's status")
	gate.open()

	// The loop has seen the updated Deployment (not ready at generation 2).
	controlplanetest.Eventually(t, wait, "a's Deployment seen at generation 2", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "has not seen generation 2")
	})
	if created := ops(d, kvscheduler.OpCreate); slices.Contains(created, "ConfigMap a-probe") {
		t.Errorf("ConfigMap a-probe, which Requires Deployment a, was created (creates %v) although the Deployment at image app:2 was never ready; deletes %v; a: %q",
			created, ops(d, kvscheduler.OpDelete), readyMessage(t, webapps, ns, "a"))
	}
}
