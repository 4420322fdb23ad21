package dependents_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestNewRequirerWaitsForTheUpdatedObjectAtItsNewSpec: one change of
// WebApp a updates Deployment d (a new image) and wants ConfigMap c, which
// requires d, for the first time: c waits until the loop sees d at its new
// spec. Here the update of d does not land (the API server refuses it for
// a while), and d's status is written meanwhile (as its controller would,
// at the old spec): an event of d at another resourceVersion, still at the
// old spec. It must not count as d seen at its new spec: c created then
// would be judged on the old Deployment's readiness.
func TestNewRequirerWaitsForTheUpdatedObjectAtItsNewSpec(t *testing.T) {
	var refuse atomic.Bool
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if refuse.Load() && req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/deployments/d") {
				return nil, errors.New("refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns { // the registration sees every namespace's WebApps
			return nil, nil
		}
		labels := map[string]string{"app": "d"}
		dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, app.Spec.Image)}})
		c := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}).
			Requires(dep).IncludeWhen(app.Spec.Config["c"] == "yes")
		return []*dependents.Object{dep, c}, nil
	}
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	opts := dependents.Options{FieldManager: "seen-new-spec", Kinds: kinds, Logger: controlplanetest.QuietLogger()}
	d, webapps := dependentstest.Start(t, t.Context(), cfg, nil, "seen-new-spec", handler, opts)
	advCreateApp(t, webapps, ns, "a", nil)
	controlplanetest.Eventually(t, wait, "Deployment d", func() bool { return exists(t, "Deployment", ns, "d") })
	setAppReady(t, ns, "d")
	controlplanetest.Eventually(t, wait, "a ready", func() bool { return has(readyMessage(t, webapps, ns, "a"), "ready: Deployment d") })

	refuse.Store(true)
	app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app.Spec.Image, app.Spec.Config = "app:2", map[string]string{"c": "yes"}
	if _, err := webapps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "c waiting for d at its new spec", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ConfigMap c: not ready: waits for Deployment d to be seen at its new spec")
	})
	seen := func() int { // the loop's events of d
		n := 0
		for _, r := range d.Loop().History().Records() {
			if strings.Contains(strings.ToLower(r.Description), "deployment") && strings.Contains(r.Description, ns+"/d updated") {
				n++
			}
		}
		return n
	}
	before := seen()
	// A status write, as d's controller would make at the old spec: another
	// resourceVersion, still ready.
	deps := controlplanetest.Clientset(cp.Config()).AppsV1().Deployments(ns)
	old, err := deps.Get(t.Context(), "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Status.UpdatedReplicas = 1
	if _, err := deps.UpdateStatus(t.Context(), old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the loop saw d's status write", func() bool { return seen() > before })

	if advConfigMap(t, ns, "c") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c") {
		t.Fatalf("ConfigMap c was created while Deployment d was at its old spec (image app:1): judged on a stale view")
	}

	refuse.Store(false) // d's update lands; once it is ready at its new spec, c follows
	controlplanetest.Eventually(t, wait, "d at its new spec", func() bool {
		dep, err := deps.Get(t.Context(), "d", metav1.GetOptions{})
		return err == nil && dep.Spec.Template.Spec.Containers[0].Image == "app:2"
	})
	setAppReady(t, ns, "d")
	controlplanetest.Eventually(t, wait, "ConfigMap c", func() bool { return advConfigMap(t, ns, "c") != nil })
}
