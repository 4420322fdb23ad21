package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv3LatchSurvivesTheOwnersDeletionAndRecreation: b's Deployment
// RequiresOwnerAvailable a, and a was available. WebApp a is deleted and
// created again under its name (another UID) while the WebApp
// controller's worker is busy with a's key (here a handler of the user's
// holds it; in production any slow handler of the kind, or a loop queue
// that is full, does): the bridge reads a's key once, and the loop gets
// one change from the old a to the new one, no deletion. The loop keeps
// the old a's latch for the new a: its deletion does not take b's
// Deployment down (the docs: "its deletion takes it down"), and a WebApp
// c that RequiresOwnerAvailable a, created once the new a's own
// Deployment exists (not ready: nothing reports on it), gets its
// Deployment at once, although the new a was never available.
func TestAdv3LatchSurvivesTheOwnersDeletionAndRecreation(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
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
	ctx := t.Context()
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv3-latch", handler, dependents.Options{
		FieldManager: "adv3-latch", Kinds: []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")},
		Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	gate := newAdvGate(t)
	// A handler of the user's on the owner kind: slow, once, for a's key.
	webapps.OnChange(ctx, "adv3-slow", func(key string, obj *demov1.WebApp) (*demov1.WebApp, error) {
		if key == ns+"/a" {
			gate.hold()
		}
		return obj, nil
	})
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if err := d.Wait(waitCtx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})

	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	advCreateApp(t, webapps, ns, "b", map[string]string{"needs": "a"})
	controlplanetest.Eventually(t, wait, "b's Deployment (a available)", func() bool { return exists(t, "Deployment", ns, "b") })

	// Delete a and create it again while the WebApp worker is held on its key.
	fresh := advRecreateWhileHeld(t, webapps, gate, ns, "a", map[string]string{})

	// The new a's own Deployment is created (the old one, left by the
	// deleted a, deleted first); nothing reports on it: not ready.
	controlplanetest.Eventually(t, wait, "the new a's Deployment", func() bool {
		return deploymentOwnerUID(t, ns, "a") == fresh.UID
	})
	advCreateApp(t, webapps, ns, "c", map[string]string{"needs": "a"})
	controlplanetest.Eventually(t, wait, "c computed", func() bool {
		return exists(t, "Deployment", ns, "c") ||
			has(readyMessage(t, webapps, ns, "c"), "waiting for WebApp "+ns+"/a to be available")
	})
	latch := d.Scheduler().GetValueStatus("dependents/adv3-latch/available/" + ns + "/a").State
	if exists(t, "Deployment", ns, "c") {
		t.Errorf("c's Deployment, which RequiresOwnerAvailable a, was created although the new a (UID %s) was never available "+
			"(its Deployment not ready; a's latch %v); b's Deployment deleted: %v; c: %q", fresh.UID, latch,
			slices.Contains(ops(d, kvscheduler.OpDelete), "Deployment b"), readyMessage(t, webapps, ns, "c"))
	}
	if !slices.Contains(ops(d, kvscheduler.OpDelete), "Deployment b") {
		t.Errorf("a's deletion did not take b's Deployment down (deletes %v; b: %q)",
			ops(d, kvscheduler.OpDelete), readyMessage(t, webapps, ns, "b"))
	}
}

// deploymentOwnerUID returns the owner UID the Deployment's
// AnnotationOwner names, "" when it does not exist.
func deploymentOwnerUID(t *testing.T, ns, name string) types.UID {
	dep, err := controlplanetest.Clientset(cp.Config()).AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	f := strings.Fields(dep.Annotations[dependents.AnnotationOwner])
	if len(f) != 3 {
		return ""
	}
	return types.UID(f[2])
}
