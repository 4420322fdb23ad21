package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdvRestartKeepsAWantedObject: an owner that stays across a restart
// keeps its objects: the first resync neither deletes nor re-creates them.
// After an earlier registration in the process (a subtest here, whose
// dependent waits for ever on an excluded object), the restarted
// registration's first resync deletes ConfigMap a-data, which WebApp a
// (unchanged) still wants, or the registration never handles a WebApp
// created after it (hang). Alone, or after a registration stopped within
// the same test, the restart keeps the object: the cause is not found yet.
func TestAdvRestartKeepsAWantedObject(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	// An earlier test ran a registration whose dependent waits for ever
	// (it requires an object IncludeWhen leaves out).
	t.Run("an earlier test", func(t *testing.T) {
		handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
			y := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}).IncludeWhen(false)
			x := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}).Requires(y)
			return []*dependents.Object{y, x}, nil
		}
		_, warmApps := advStart(t, t.Context(), "adv-keep-warm", cmKind, handler)
		warmNs := controlplanetest.Namespace(t, cp.Config())
		advCreateApp(t, warmApps, warmNs, "w", nil)
		controlplanetest.Eventually(t, wait, "x waiting", func() bool {
			return has(readyMessage(t, warmApps, warmNs, "w"), "ConfigMap x: waiting for")
		})
	})
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv-keep", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "a-data") != nil })
	before := advConfigMap(t, ns, "a-data")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	d, webapps = advStart(t, t.Context(), "adv-keep", cmKind, advConfigMaps)
	advCreateApp(t, webapps, ns, "later", map[string]string{"cm": "later"})
	controlplanetest.Eventually(t, wait, "later's ConfigMap", func() bool { return advConfigMap(t, ns, "later") != nil })
	for _, op := range ops(d, kvscheduler.OpDelete) {
		if op == "ConfigMap a-data" {
			t.Errorf("the first resync after the restart deleted ConfigMap a-data, which WebApp a still wants")
		}
	}
	if now := advConfigMap(t, ns, "a-data"); now == nil || now.UID != before.UID {
		t.Errorf("ConfigMap a-data was deleted (and maybe created again) across the restart: %v", now)
	}
}
