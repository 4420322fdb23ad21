package dependents_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// The adv16-adv18 attacks share one cast: WebApp z, whose ConfigMap is
// ready only while another controller's annotation says so, and WebApps
// whose ConfigMaps RequiresOwner z. Its pieces live here so that each
// test says only what its attack changes.

// annotatedReady judges a ConfigMap ready while its adv16/ready
// annotation (another controller's say) is "yes"; why is the message
// while it is not.
func annotatedReady(why string) func(runtime.Object) (bool, string) {
	return func(live runtime.Object) (bool, string) {
		cm, ok := live.(*corev1.ConfigMap)
		return ok && cm.Annotations["adv16/ready"] == "yes", why
	}
}

// zRequirerObjects is the cast's desired state for app: for WebApp z of
// ns a ConfigMap z-cfg, ready by annotation; for every other WebApp of ns
// a ConfigMap <name>-cm that RequiresOwner z; nothing outside ns.
func zRequirerObjects(ns string, app *demov1.WebApp) []*dependents.Object {
	switch {
	case app.Namespace != ns:
		return nil
	case app.Name == "z":
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"}}).
			ReadyWhen(annotatedReady("z's controller has not said ready"))}
	}
	return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
		RequiresOwner(ns, "z")}
}

// zRequirers is zRequirerObjects as a handler with a view.
func zRequirers(ns string) dependents.ViewHandler[*demov1.WebApp] {
	return func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		return zRequirerObjects(ns, app), nil
	}
}

// startZAndB creates WebApps z and b in ns, says z ready, and waits until
// b's ConfigMap exists and b is ready: the state every attack on z's
// readiness starts from.
func startZAndB(t *testing.T, webapps democtl.WebAppController, ns string) {
	t.Helper()
	advCreateApp(t, webapps, ns, "z", nil)
	controlplanetest.Eventually(t, wait, "z-cfg", func() bool { return advConfigMap(t, ns, "z-cfg") != nil })
	adv16Annotate(t, ns, "z-cfg", "yes")
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && adv13Ready(t, webapps, ns, "b")
	})
}

// heldPatchIn tells whether req writes a held-without record of field
// manager fm on a ConfigMap of ns.
func heldPatchIn(req *http.Request, ns, fm string) bool {
	return req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps/") &&
		req.URL.Query().Get("fieldManager") == fm+"-held"
}

// longHealingLoop is the default event loop with the after-error healing
// resync pushed past any test, so that the window after an aborted event
// is the test's and not the machine's load.
func longHealingLoop() eventloop.Config {
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	return lc
}

// configMapOptions are a registration's options for the ConfigMap kind
// with field manager fm and event loop lc, quiet.
func configMapOptions(fm string, lc *eventloop.Config) dependents.Options {
	return dependents.Options{FieldManager: fm, Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute, EventLoop: lc}
}
