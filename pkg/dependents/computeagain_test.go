package dependents_test

import (
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestComputeAgainComputesAnOwnerOnStateTheRegistrationDoesNotWatch: a
// cross-owner allocation, as the WebApp operator's node ports: WebApp b
// waits for a resource WebApp a holds, kept in the test's memory (no
// object of the API server), so no event of b's reaches the loop when a
// frees it. a's handler frees it when a's image changes and calls
// ComputeAgain for b from inside the loop (it never blocks); b's
// ConfigMap then says it got the resource. Periodic healing is off, so
// nothing else computes b again.
func TestComputeAgainComputesAnOwnerOnStateTheRegistrationDoesNotWatch(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var freed atomic.Bool
	var dp atomic.Pointer[dependents.Dependents]
	var againErr atomic.Pointer[error]
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		state := "holds it"
		switch {
		case app.Name == "a" && app.Spec.Image == "app:2":
			state = "freed it"
			if !freed.Swap(true) {
				// The allocation changed: b, which waits for it, is
				// computed again.
				err := dp.Load().ComputeAgain(ns+"/b", ns+"/no-such-owner")
				againErr.Store(&err)
			}
		case app.Name == "b" && freed.Load():
			state = "got it"
		case app.Name == "b":
			state = "waiting"
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"},
			Data: map[string]string{"resource": state}})}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "compute-again", kinds, handler, func(o *dependents.Options) {
		cfg := dependents.DefaultEventLoopConfig()
		cfg.EnablePeriodicHealing = false
		o.EventLoop = &cfg
	})
	dp.Store(d)
	says := func(name, state string) func() bool {
		return func() bool {
			cm := advConfigMap(t, ns, name)
			return cm != nil && cm.Data["resource"] == state
		}
	}
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a holds the resource", says("a-cm", "holds it"))
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b waits for it", says("b-cm", "waiting"))
	touchImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a freed it", says("a-cm", "freed it"))
	if err := againErr.Load(); err == nil || *err != nil {
		t.Fatalf("ComputeAgain from a's handler: %v", err)
	}
	controlplanetest.Eventually(t, wait, "b, computed again, got it", says("b-cm", "got it"))
}
