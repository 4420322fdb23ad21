package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3ReadyWhenIsHandedTheInformersObject: a readiness rule is given
// the object "as the API server shows it"; the handler is given a copy of
// its owner and the View returns copies, but a ReadyWhen gets the shared
// informer cache's own object (the loop's picture holds the store's
// pointers). A rule that writes to it (here it notes, in an annotation,
// that it judged the object, as code that defaults or stamps a TypeMeta
// would change it) changes the object every controller and cache reader of
// the factory sees, and races them; ReadyFunc's docs do not forbid it.
func TestAdv3ReadyWhenIsHandedTheInformersObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name}}).
			ReadyWhen(func(live runtime.Object) (bool, string) {
				if m, err := meta.Accessor(live); err == nil {
					a := m.GetAnnotations()
					if a == nil {
						a = map[string]string{}
					}
					a["judged-by"] = "ready-rule"
					m.SetAnnotations(a)
				}
				return true, ""
			})
		return []*dependents.Object{cm}, nil
	}
	ctx := t.Context()
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv3-readycopy", handler, dependents.Options{
		FieldManager: "adv3-readycopy", Kinds: []schema.GroupVersionKind{cmGVK}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := f.ControllerFactory().ForKind(cmGVK)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if err := d.Wait(waitCtx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's ConfigMap judged ready", func() bool {
		return has(d.Summary(ns, "a").Message(), "ready: ConfigMap a")
	})
	obj, ok, err := configMaps.Informer().GetStore().GetByKey(ns + "/a")
	if err != nil || !ok {
		t.Fatalf("a's ConfigMap not in the informer's cache: %v", err)
	}
	if cached := obj.(*corev1.ConfigMap); cached.Annotations["judged-by"] != "" {
		t.Errorf("the readiness rule wrote into the informer cache's ConfigMap (annotations %v; the API server's has none such)",
			cached.Annotations)
	}
}
