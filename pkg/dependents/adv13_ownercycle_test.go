package dependents_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// adv13Requirer returns a handler of the WebApps in namespaces nss: one
// ConfigMap "<name>-cm" requiring the owner config "requires" names
// ("<namespace>/<name>"), if any.
func adv13Requirer(nss ...string) dependents.Handler[*demov1.WebApp] {
	return func(app *demov1.WebApp) ([]*dependents.Object, error) {
		mine := false
		for _, ns := range nss {
			mine = mine || app.Namespace == ns
		}
		if !mine {
			return nil, nil
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})
		if r := app.Spec.Config["requires"]; r != "" {
			ns, name, _ := strings.Cut(r, "/")
			cm.RequiresOwner(ns, name)
		}
		return []*dependents.Object{cm}, nil
	}
}

// adv13SetConfig sets key of the WebApp's config to value ("" removes it).
func adv13SetConfig(t *testing.T, webapps democtl.WebAppController, ns, name, key, value string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if app.Spec.Config == nil {
			app.Spec.Config = map[string]string{}
		}
		if value == "" {
			delete(app.Spec.Config, key)
		} else {
			app.Spec.Config[key] = value
		}
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestAdv13OwnerCycleBrokenWhileObjectsWait: a and b, in two namespaces,
// require each other: the cycle is named. Then b stops requiring a: b's
// ConfigMap is created, b is ready, a's ConfigMap is created and both
// conditions are True, naming no cycle any more.
func TestAdv13OwnerCycleBrokenWhileObjectsWait(t *testing.T) {
	ns1 := controlplanetest.Namespace(t, cp.Config())
	ns2 := controlplanetest.Namespace(t, cp.Config())
	_, webapps := advStart(t, t.Context(), "adv13-cycle", adv13CMKind, adv13Requirer(ns1, ns2))
	advCreateApp(t, webapps, ns1, "a", map[string]string{"requires": ns2 + "/b"})
	advCreateApp(t, webapps, ns2, "b", map[string]string{"requires": ns1 + "/a"})
	cycle := "WebApp " + ns1 + "/a → WebApp " + ns2 + "/b → WebApp " + ns1 + "/a"
	controlplanetest.Eventually(t, wait, "a's condition names the cycle "+cycle, func() bool {
		return has(readyMessage(t, webapps, ns1, "a"), cycle)
	})
	adv13SetConfig(t, webapps, ns2, "b", "requires", "")
	controlplanetest.Eventually(t, wait, "a and b ready, their ConfigMaps created", func() bool {
		return adv13Ready(t, webapps, ns1, "a") && adv13Ready(t, webapps, ns2, "b") &&
			advConfigMap(t, ns1, "a-cm") != nil && advConfigMap(t, ns2, "b-cm") != nil
	})
	// And formed again: b requires a, ready, whose marker stays (a's
	// ConfigMap is ready and created): no cycle, nothing deleted.
	adv13SetConfig(t, webapps, ns2, "b", "requires", ns1+"/a")
	controlplanetest.Eventually(t, wait, "b's requirement seen", func() bool {
		return adv13Ready(t, webapps, ns2, "b")
	})
	if advConfigMap(t, ns1, "a-cm") == nil || advConfigMap(t, ns2, "b-cm") == nil {
		t.Fatal("a ConfigMap was deleted when b required a again")
	}
}

// TestAdv13SelfCycleBrokenByTheOwner: a requires itself (named as a
// cycle), then stops: its ConfigMap is created and it is ready.
func TestAdv13SelfCycleBrokenByTheOwner(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	_, webapps := advStart(t, t.Context(), "adv13-selfcycle", adv13CMKind, adv13Requirer(ns))
	advCreateApp(t, webapps, ns, "a", map[string]string{"requires": ns + "/a"})
	controlplanetest.Eventually(t, wait, "a's condition names its cycle", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "a dependency cycle between owners")
	})
	adv13SetConfig(t, webapps, ns, "a", "requires", "")
	controlplanetest.Eventually(t, wait, "a ready, its ConfigMap created", func() bool {
		return adv13Ready(t, webapps, ns, "a") && advConfigMap(t, ns, "a-cm") != nil
	})
}
