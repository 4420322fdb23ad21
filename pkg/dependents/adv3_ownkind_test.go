package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3OwnerKindAmongItsObjectsKinds: a WebApp that keeps a WebApp of
// its own (a composite, as kro nests instances of a graph) and a
// ConfigMap ordered after it; the owner kind is one of Options.Kinds.
// The loop handler takes every change of that kind for an owner's change
// (the owner branch comes first), so the child WebApp, once created, never
// enters the loop's picture of the objects: it is "not created yet" for
// ever, and the ConfigMap ordered after it is never created, although the
// child exists (and, with no readiness rule for the kind, is ready once it
// exists).
func TestAdv3OwnerKindAmongItsObjectsKinds(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns || app.Spec.Config["parent"] != "yes" {
			return nil, nil
		}
		child := dependents.Of(&demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-child"},
			Spec: demov1.WebAppSpec{Image: app.Spec.Image}})
		cfg := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cfg"}}).After(child)
		return []*dependents.Object{child, cfg}, nil
	}
	kinds := []schema.GroupVersionKind{demov1.SchemeGroupVersion.WithKind("WebApp"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv3-ownkind", kinds, handler)
	advCreateApp(t, webapps, ns, "p", map[string]string{"parent": "yes"})
	controlplanetest.Eventually(t, wait, "the child WebApp", func() bool {
		_, err := webapps.Get(t.Context(), ns, "p-child", metav1.GetOptions{})
		return err == nil
	})
	// The loop has computed the child as an owner: it has seen it.
	controlplanetest.Eventually(t, wait, "the child computed", func() bool { return d.Summary(ns, "p-child").Known })
	gen := touch(t, webapps, ns, "p")
	controlplanetest.Eventually(t, wait, "p computed again", func() bool { return d.Summary(ns, "p").Generation == gen })
	if advConfigMap(t, ns, "p-cfg") == nil {
		t.Errorf("the ConfigMap ordered after the existing child WebApp was never created; p: %q", d.Summary(ns, "p").Message())
	}
}
