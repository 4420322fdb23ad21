package dependents_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestRepairDriftRepairsAChangeAtOnce: with Options.RepairDrift, an object
// changed behind the registration's back is applied again at once (a
// Repair of that key), as one deleted is; the periodic healing, which
// would repair it too, is off here, so only the change's own event can.
// The owner's own change of the object is no drift: it is applied as
// desired.
func TestRepairDriftRepairsAChangeAtOnce(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns { // another test's leftovers are not this field manager's
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Data: map[string]string{"image": app.Spec.Image}})}, nil
	}
	cms := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "repair-drift", cms, handler, func(o *dependents.Options) {
		o.RepairDrift = true
		cfg := dependents.DefaultEventLoopConfig()
		cfg.EnablePeriodicHealing = false
		o.EventLoop = &cfg
	})
	kube := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	says := func(image string) func() bool {
		return func() bool {
			cm, err := kube.Get(t.Context(), "web", metav1.GetOptions{})
			return err == nil && cm.Data["image"] == image
		}
	}
	app := createApp(t, webapps, ns, "web", "")
	controlplanetest.Eventually(t, wait, "the ConfigMap applied", says(app.Spec.Image))
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := kube.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["image"] = "someone-else"
		_, err = kube.Update(t.Context(), cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the ConfigMap repaired", says(app.Spec.Image))
	controlplanetest.Eventually(t, wait, "the repair recorded as a change", func() bool {
		for _, r := range d.Loop().History().Records() {
			if r.Name == "Repair" && strings.Contains(r.Description, "changed") {
				return true
			}
		}
		return false
	})
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a, err := webapps.Get(t.Context(), ns, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		a.Spec.Image = "app:2"
		_, err = webapps.Update(t.Context(), a)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the owner's own change applied", says("app:2"))
}
