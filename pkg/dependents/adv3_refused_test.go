package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3RecreatedOwnerTakesTheObjectARefusedOwnerWaitsFor: WebApp a
// keeps the ConfigMap "shared"; WebApp b returns one of the same name and
// is refused it ("it is WebApp ns/a's"). a is deleted and created again
// under its name (another UID, another owner) while the WebApp worker is
// busy with a's key, so the loop gets one change from the old a to the
// new one, no deletion. The new a is computed as the old one's successor:
// the old object is deleted (left by a deleted owner), and once its
// deletion is seen the new a, still holding the object's claim, gets it
// and b stays refused. The docs: once the first owner frees the object
// (deleted) and its deletion is seen, "the refused owner gets its own
// object"; had the loop seen a's deletion, b would have (and the new a
// been refused).
func TestAdv3RecreatedOwnerTakesTheObjectARefusedOwnerWaitsFor(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advConfigMaps(app)
	}
	ctx := t.Context()
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv3-refused", handler, dependents.Options{
		FieldManager: "adv3-refused", Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	gate := newAdvGate(t)
	webapps.OnChange(ctx, "adv3-slow", func(key string, obj *demov1.WebApp) (*demov1.WebApp, error) {
		if key == ns+"/a" {
			gate.hold()
		}
		return obj, nil
	})
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
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "shared") != nil })
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "b refused", func() bool {
		return has(d.Summary(ns, "b").Message(), "failed: ConfigMap shared")
	})
	old := advConfigMap(t, ns, "shared")

	advRecreateWhileHeld(t, webapps, gate, ns, "a", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "ConfigMap shared created again", func() bool {
		cm := advConfigMap(t, ns, "shared")
		return cm != nil && cm.UID != old.UID
	})
	if cm := advConfigMap(t, ns, "shared"); cm.Data["owner"] != "b" {
		t.Errorf("once the deleted a's ConfigMap was deleted, the new a (another owner) got it (data %v, %s), not b, refused it since before: b: %q",
			cm.Data, cm.Annotations[dependents.AnnotationOwner], d.Summary(ns, "b").Message())
	}
}
