package dependents_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// advRequiresEach returns a handler of the owners in ns: each entry of
// the owner's Config is a ConfigMap <owner>-<entry> that RequiresOwner the
// owner the entry names (none when empty).
func advRequiresEach(ns string) func(app *demov1.WebApp) ([]*dependents.Object, error) {
	return func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		var out []*dependents.Object
		for name, req := range app.Spec.Config {
			cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-" + name}})
			if req != "" {
				cm.RequiresOwner(ns, req)
			}
			out = append(out, cm)
		}
		return out, nil
	}
}

// TestAdv9ObjectWaitingOffTheCycleReportedAsNeverCreatable: owner a has two
// objects, a-x RequiresOwner b (and b's object RequiresOwner a: a cycle)
// and a-y RequiresOwner c, which only waits for d, not created yet. a-y is
// on no cycle: it is created once d, then c, are ready. The summary must
// not report it FAILED "waits for itself, it can never be created": the
// cycle found for the owner is pinned on every pending object of the owner
// that waits for any owner.
func TestAdv9ObjectWaitingOffTheCycleReportedAsNeverCreatable(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv9-bystander", cmKind, advRequiresEach(ns))
	advCreateApp(t, webapps, ns, "a", map[string]string{"x": "b", "y": "c"})
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "a"})
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "d"})
	controlplanetest.Eventually(t, wait, "a's summary names the cycle a → b → a for a-x and lists a-y", func() bool {
		s := d.Summary(ns, "a")
		all := strings.Join(append(slices.Clone(s.Failed), s.Pending...), "\n")
		return has(all, "ConfigMap a-x: waits for itself") && has(all, "ConfigMap a-y:")
	})
	s := d.Summary(ns, "a")
	for _, f := range s.Failed {
		if has(f, "ConfigMap a-y") {
			t.Errorf("a-y waits only for c (which waits for d, not yet created), on no cycle, yet a's summary reports it failed: %q (failed %v, pending %v)",
				f, s.Failed, s.Pending)
		}
	}
	// a-y can be created: d, then c, become ready.
	advCreateApp(t, webapps, ns, "d", map[string]string{"cm": ""})
	controlplanetest.Eventually(t, wait, "a-y created once c is ready", func() bool {
		return advConfigMap(t, ns, "a-y") != nil
	})
	if advConfigMap(t, ns, "a-x") != nil {
		t.Errorf("a-x, on the cycle a → b → a, was created")
	}
}
