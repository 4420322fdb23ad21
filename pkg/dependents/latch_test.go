package dependents_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestRequiresOwnerAvailableLatches: a chain a <- b <- c of WebApps, each
// one Deployment that RequiresOwnerAvailable the one before. Once a and b
// were ready, an outage of their Deployments keeps c's; deleting a takes
// b's and c's down, in the same cascade.
func TestRequiresOwnerAvailableLatches(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns { // another test's leftovers are not this field manager's
			return nil, nil
		}
		labels := map[string]string{"app": app.Name}
		dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, app.Spec.Image)}})
		if other := app.Spec.Config["needs"]; other != "" {
			dep.RequiresOwnerAvailable(app.Namespace, other)
		}
		return []*dependents.Object{dep}, nil
	}
	deployments := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}
	d, webapps := advStart(t, t.Context(), "latch-test", deployments, handler)
	create := func(name, needs string) {
		if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: demov1.WebAppSpec{Image: "app:1", Config: map[string]string{"needs": needs}}}); err != nil {
			t.Fatal(err)
		}
	}
	create("a", "")
	create("b", "a")
	create("c", "b")
	controlplanetest.Eventually(t, wait, "b waits for a to be available", func() bool {
		return has(readyMessage(t, webapps, ns, "b"), "waiting for WebApp "+ns+"/a to be available")
	})
	for _, name := range []string{"a", "b", "c"} {
		controlplanetest.Eventually(t, wait, "Deployment "+name+" created", func() bool { return exists(t, "Deployment", ns, name) })
		setAppReady(t, ns, name)
	}
	for _, name := range []string{"a", "b"} {
		setDeploymentUnavailable(t, ns, name)
		controlplanetest.Eventually(t, wait, name+" not ready", func() bool {
			return has(readyMessage(t, webapps, ns, name), "not ready")
		})
	}
	// c's next generation is computed after the outages were: what they
	// did is committed by then.
	gen := touch(t, webapps, ns, "c")
	controlplanetest.Eventually(t, wait, "c's generation computed", func() bool {
		return d.Summary(ns, "c").Generation == gen
	})
	if !exists(t, "Deployment", ns, "c") || slices.Contains(ops(d, kvscheduler.OpDelete), "Deployment c") {
		t.Fatalf("an outage of a's and b's Deployments took c's down (deletes: %v; c: %q)",
			ops(d, kvscheduler.OpDelete), readyMessage(t, webapps, ns, "c"))
	}

	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b", "c"} {
		controlplanetest.Eventually(t, wait, "Deployment "+name+" deleted", func() bool { return !exists(t, "Deployment", ns, name) })
		// The transaction's record is kept when it ends, which can be just
		// after the API server deleted the object.
		dependentstest.Recorded(t, d, kvscheduler.OpDelete, "Deployment "+name)
	}
	if dels := ops(d, kvscheduler.OpDelete); !before(dels, "Deployment c", "Deployment b") {
		t.Errorf("deletes %v: c's Deployment must go before b's", dels)
	}
	controlplanetest.Eventually(t, wait, "c waits for b to be available", func() bool {
		return has(readyMessage(t, webapps, ns, "c"), "waiting for WebApp "+ns+"/b to be available")
	})
}

// setDeploymentUnavailable writes the Deployment's status as its
// controller would in an outage: 0 of 1 replica available.
func setDeploymentUnavailable(t *testing.T, ns, name string) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		dep.Status.ObservedGeneration, dep.Status.Replicas = dep.Generation, 1
		dep.Status.AvailableReplicas, dep.Status.ReadyReplicas, dep.Status.UnavailableReplicas = 0, 0, 1
		_, err = kube.AppsV1().Deployments(ns).UpdateStatus(context.Background(), dep, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// touch changes the WebApp's spec and returns its new generation.
func touch(t *testing.T, webapps democtl.WebAppController, ns, name string) int64 {
	t.Helper()
	var gen int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config["touched"] = "yes"
		app, err = webapps.Update(t.Context(), app)
		if err == nil {
			gen = app.Generation
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return gen
}
