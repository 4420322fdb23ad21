package dependents_test

import (
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestCycleBetweenOwnersIsNamed: an owner whose object RequiresOwner the
// owner itself (a), and two owners whose objects require each other (b
// RequiresOwner c, c RequiresOwnerAvailable b), wait for ever: an owner's
// marker needs every one of its objects ready, and each waits for the
// other's marker. The scheduler sees no cycle (the markers it waits for
// are absent, not waiting values), so the registration names it: each
// owner's condition says FAILED with the cycle of owners, and a warning
// names it in the log. d, which requires b, only waits: it is on no cycle.
func TestCycleBetweenOwnersIsNamed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})
		if r := app.Spec.Config["requires"]; r != "" {
			cm.RequiresOwner(ns, r)
		}
		if r := app.Spec.Config["available"]; r != "" {
			cm.RequiresOwnerAvailable(ns, r)
		}
		return []*dependents.Object{cm}, nil
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	hook := logtest.NewLocal(log)
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "ownercycle", cmKind, handler, func(o *dependents.Options) { o.Logger = log })
	advCreateApp(t, webapps, ns, "a", map[string]string{"requires": "a"})
	advCreateApp(t, webapps, ns, "b", map[string]string{"requires": "c"})
	advCreateApp(t, webapps, ns, "c", map[string]string{"available": "b"})
	advCreateApp(t, webapps, ns, "d", map[string]string{"requires": "b"})
	cycles := map[string]string{
		"a": "WebApp " + ns + "/a → WebApp " + ns + "/a",
		"b": "WebApp " + ns + "/b → WebApp " + ns + "/c → WebApp " + ns + "/b",
		"c": "WebApp " + ns + "/c → WebApp " + ns + "/b → WebApp " + ns + "/c",
	}
	for name, cycle := range cycles {
		controlplanetest.Eventually(t, wait, name+"'s condition names the cycle "+cycle, func() bool {
			msg := readyMessage(t, webapps, ns, name)
			return has(msg, "failed: ConfigMap "+name+"-cm") && has(msg, "a dependency cycle between owners "+cycle)
		})
		controlplanetest.Eventually(t, wait, "a warning names the cycle "+cycle, func() bool {
			for _, e := range hook.AllEntries() {
				if e.Level == logrus.WarnLevel && strings.Contains(e.Message, cycle) {
					return true
				}
			}
			return false
		})
	}
	controlplanetest.Eventually(t, wait, "d waits for b", func() bool {
		return has(readyMessage(t, webapps, ns, "d"), "pending: ConfigMap d-cm: waiting for WebApp "+ns+"/b to be ready")
	})
	if s := d.Summary(ns, "d"); len(s.Failed) > 0 {
		t.Errorf("d only waits for b, on a cycle it is not on, yet it failed: %v", s.Failed)
	}
	for _, name := range []string{"a-cm", "b-cm", "c-cm", "d-cm"} {
		if advConfigMap(t, ns, name) != nil {
			t.Errorf("ConfigMap %s was created on an owner that can never be ready", name)
		}
	}
}
