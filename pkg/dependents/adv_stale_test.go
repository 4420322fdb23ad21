package dependents_test

import (
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdvIncludeWhenFlipCreatesARequirerOnAStaleView: ConfigMap x
// Requires Deployment y, which IncludeWhen withdraws and then includes
// again. Withdrawn, y is deleted (and x with it); included again before
// the loop has seen y's deletion from its informer, y is judged by the
// deleted Deployment's last state (every replica available): its marker
// is put, and x is created with the new, not yet ready y. "Nothing waits
// on a guess: a dependent is created only once what it waits for is
// ready as the informers show it"; IncludeWhen: "what requires it
// waits". Here the handler is slow when y is withdrawn, so that the
// second change is queued behind the first, as with a busy loop.
func TestAdvIncludeWhenFlipCreatesARequirerOnAStaleView(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var enterOnce, releaseOnce sync.Once
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		off := app.Spec.Config["y"] == "off"
		if off {
			enterOnce.Do(func() { close(entered); <-release })
		}
		labels := map[string]string{"app": "y"}
		y := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "y"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, "y:1")}}).IncludeWhen(!off)
		x := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}).Requires(y)
		return []*dependents.Object{y, x}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"), appsv1.SchemeGroupVersion.WithKind("Deployment")}
	d, webapps := advStart(t, t.Context(), "adv-stale", kinds, handler)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"y": "on"})
	controlplanetest.Eventually(t, wait, "Deployment y", func() bool { return exists(t, "Deployment", ns, "y") })
	setAppReady(t, ns, "y")
	controlplanetest.Eventually(t, wait, "ConfigMap x, once y is ready", func() bool { return advConfigMap(t, ns, "x") != nil })

	setConfig := func(v string) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
			if err != nil {
				return err
			}
			app.Spec.Config = map[string]string{"y": v}
			_, err = webapps.Update(t.Context(), app)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setConfig("off")
	<-entered // the loop computes the withdrawal
	setConfig("on")
	// The second change is queued behind the first (the loop is in the
	// handler; no other event comes meanwhile) before the loop goes on.
	controlplanetest.Eventually(t, wait, "the second change queued", func() bool {
		return d.Loop().Status().QueueLength > 0
	})
	releaseOnce.Do(func() { close(release) })

	controlplanetest.Eventually(t, wait, "the loop through both changes", func() bool {
		n := 0
		for _, r := range d.Loop().History().Records() {
			if strings.Contains(r.Description, "WebApp "+ns+"/a updated") {
				n++
			}
		}
		return n >= 2
	})
	creates := 0
	for _, op := range ops(d, kvscheduler.OpCreate) {
		if op == "ConfigMap x" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("ConfigMap x created %d times, want once: it was created again with the re-created Deployment y, "+
			"not ready (ops %v)", creates, ops(d, kvscheduler.OpCreate))
	}
}
