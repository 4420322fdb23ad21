package dependents_test

import (
	"context"
	"slices"
	"testing"

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

// TestAdv3RequirerCreatedOnTheOldSpecAtTheFirstResync: the Deployment of
// WebApp a is ready at image app:1. While no replica runs, a is changed
// to image app:2 with a ConfigMap that Requires the Deployment (an edit
// during the operator's rolling upgrade). The restart's first resync
// computes a with nothing known before it, so nothing marks the
// Deployment as being changed (markUpdates needs the last desired value)
// and nothing holds the new ConfigMap: it judges the Deployment on the
// app:1 object it listed (every replica available), and creates the
// ConfigMap in the transaction that updates the Deployment to app:2,
// before the Deployment at that spec was ever ready; it is deleted again
// once the loop sees the update (generation 2, not seen by its
// controller). The same as TestAdvRequirerCreatedOnTheDeploymentsOldSpec,
// across a restart.
func TestAdv3RequirerCreatedOnTheOldSpecAtTheFirstResync(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advAppAndProbe(app)
	}
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv3-restart", kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	controlplanetest.Eventually(t, wait, "a Ready", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ready: Deployment a") &&
			!has(readyMessage(t, webapps, ns, "a"), "pending")
	})
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = "app:2"
		app.Spec.Config = map[string]string{"probe": "true"}
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	d, webapps = advStart(t, t.Context(), "adv3-restart", kinds, handler)
	controlplanetest.Eventually(t, wait, "a's Deployment seen at generation 2", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "has not seen generation 2")
	})
	if created := ops(d, kvscheduler.OpCreate); slices.Contains(created, "ConfigMap a-probe") {
		t.Errorf("ConfigMap a-probe, which Requires Deployment a, was created at the first resync (creates %v) although the Deployment at image app:2 was never ready; deletes %v; a: %q",
			created, ops(d, kvscheduler.OpDelete), readyMessage(t, webapps, ns, "a"))
	}
}
