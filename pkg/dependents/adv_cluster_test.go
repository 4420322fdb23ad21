package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

var advCRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// advCRD is a handler: a CustomResourceDefinition (cluster-scoped, named
// by the WebApp's config "crd") and a ConfigMap ordered after it, created
// once the CRD is Established (DefaultReady).
func advCRD(app *demov1.WebApp) ([]*dependents.Object, error) {
	group := app.Spec.Config["crd"]
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	c := dependents.Of(crd)
	cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-uses-crd"}}).After(c)
	return []*dependents.Object{c, cm}, nil
}

// TestAdvClusterScopedDependentIsNeverCreated: DefaultReady promises a
// CustomResourceDefinition's readiness ("once Established") and Of puts an
// object in its owner's namespace only "for namespaced kinds". But the
// builder sets the owner's namespace on every object that names none, a
// cluster-scoped CRD included; the descriptor refuses it ("is
// cluster-scoped but ... has a namespace") for ever, so the CRD is never
// created and nothing ordered after it is either. A handler cannot return
// a cluster-scoped object at all (giving no namespace is the only way to
// say it is cluster-scoped, and any other namespace is refused).
func TestAdvClusterScopedDependentIsNeverCreated(t *testing.T) {
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}
	_, webapps := advStart(t, t.Context(), "adv-crd", kinds, advCRD)
	ns := controlplanetest.Namespace(t, cp.Config())
	dyn := dynamic.NewForConfigOrDie(cp.Config())
	t.Cleanup(func() {
		_ = dyn.Resource(advCRDs).Delete(context.WithoutCancel(t.Context()), "widgets.adv27.lariat.dev", metav1.DeleteOptions{})
	})
	advCreateApp(t, webapps, ns, "uses", map[string]string{"crd": "adv27.lariat.dev"})
	var msg string
	controlplanetest.Eventually(t, wait, "the CRD created, or a failure in the WebApp's status", func() bool {
		msg = readyMessage(t, webapps, ns, "uses")
		_, err := dyn.Resource(advCRDs).Get(t.Context(), "widgets.adv27.lariat.dev", metav1.GetOptions{})
		return err == nil || has(msg, "failed:")
	})
	if _, err := dyn.Resource(advCRDs).Get(t.Context(), "widgets.adv27.lariat.dev", metav1.GetOptions{}); err != nil {
		t.Fatalf("the CRD dependent is not created (%v); the WebApp's condition: %s", err, msg)
	}
	controlplanetest.Eventually(t, wait, "the ConfigMap ordered after the Established CRD", func() bool {
		return advConfigMap(t, ns, "uses-uses-crd") != nil
	})
}
