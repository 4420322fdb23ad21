package dependents_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv3OwnersDeletedWhileStoppedIgnoreRequiresOwner: b's Deployment
// RequiresOwner a (created once a's Deployment was ready). Both WebApps
// are deleted while no replica runs; the restart's first resync deletes
// both Deployments. Objects read back after a restart are ordered only by
// their lariat.dev/ordered-after annotation (docs/safety.md: "each object
// names ... the objects it is ordered after or requires"), which names
// the objects of its own owner, never those of the owner it requires: so
// a's Deployment, which b's required, is deleted first (key order), then
// b's. While running, deleting a takes b's Deployment down first.
func TestAdv3OwnersDeletedWhileStoppedIgnoreRequiresOwner(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		labels := map[string]string{"app": app.Name}
		dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, app.Spec.Image)}})
		if other := app.Spec.Config["needs"]; other != "" {
			dep.RequiresOwner(app.Namespace, other)
		}
		return []*dependents.Object{dep}, nil
	}
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv3-crossrestart", kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{"needs": "a"})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	controlplanetest.Eventually(t, wait, "b's Deployment, once a is ready", func() bool { return exists(t, "Deployment", ns, "b") })
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := webapps.Delete(t.Context(), ns, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	d, _ = advStart(t, t.Context(), "adv3-crossrestart", kinds, handler)
	controlplanetest.Eventually(t, wait, "both Deployments deleted", func() bool {
		return !exists(t, "Deployment", ns, "a") && !exists(t, "Deployment", ns, "b")
	})
	var deleted []string
	controlplanetest.Eventually(t, wait, "both deletes recorded", func() bool {
		deleted = nil
		for _, op := range ops(d, kvscheduler.OpDelete) {
			if n, ok := strings.CutPrefix(op, "Deployment "); ok && (n == "a" || n == "b") {
				deleted = append(deleted, n)
			}
		}
		return len(deleted) == 2
	})
	if !before(deleted, "b", "a") {
		t.Errorf("the owners deleted while stopped: Deployments deleted in the order %v, want b (which required WebApp a) before a", deleted)
	}
}
