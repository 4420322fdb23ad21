package dependents_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestObjectThatPanicsWhenCopiedFailsItsOwnerAlone: a handler returns, for
// owner p, an unstructured ConfigMap holding a Go int (not the int64 JSON
// numbers decode to), a common slip when building objects by hand;
// copying it panics. That is p's error, as a panic in the handler itself
// is: p's condition says so, q's objects stay, and the loop stays healthy.
// An abort instead would heal by a resync that panics in the same place,
// again and again, and no owner would be handled until the loop gave up.
func TestObjectThatPanicsWhenCopiedFailsItsOwnerAlone(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "panic-object-" + ns[len(ns)-5:] // per run: a later run (-count) must not take this one's objects for its own
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if app.Name == "p" {
			bad := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "p-cm"},
				"data":     map[string]any{"replicas": 3},
			}}
			return []*dependents.Object{dependents.Of(bad)}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: time.Second}
	opts := dependents.Options{FieldManager: fm, Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute, EventLoop: &lc}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cp.Config(), nil, fm, handler, opts)
	advCreateApp(t, webapps, ns, "q", nil)
	controlplanetest.Eventually(t, wait, "q's ConfigMap, q ready", func() bool {
		return advConfigMap(t, ns, "q-cm") != nil && adv13Ready(t, webapps, ns, "q")
	})
	advCreateApp(t, webapps, ns, "p", nil)
	controlplanetest.Eventually(t, wait, "p's condition naming the panic", func() bool {
		return has(dependentstest.ReadyMessage(t.Context(), webapps, ns, "p"), "panic")
	})
	// Another event after p's: the loop still handles owners.
	advCreateApp(t, webapps, ns, "r", nil)
	controlplanetest.Eventually(t, wait, "r's ConfigMap, r ready", func() bool {
		return advConfigMap(t, ns, "r-cm") != nil && adv13Ready(t, webapps, ns, "r")
	})
	if err := d.Loop().Health(); err != nil {
		t.Errorf("loop health after p's object panicked: %v (handler errors %q)", err, adv17HandlerErrors(d))
	}
	for _, del := range ops(d, kvscheduler.OpDelete) {
		if del == "ConfigMap q-cm" {
			t.Errorf("q's ConfigMap was deleted after p's object panicked")
		}
	}
	if errs := adv17HandlerErrors(d); len(errs) > 0 {
		t.Errorf("p's panic failed events (it is p's error alone): %q", errs)
	}
}
