package dependents_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// advGated is a handler: a ConfigMap "gate-<name>", ready only when the
// WebApp's config "open" is "true", and the ConfigMap named by config
// "cm", ordered after the gate: it is not created while the gate is shut.
func advGated(app *demov1.WebApp) ([]*dependents.Object, error) {
	open := app.Spec.Config["open"] == "true"
	gate := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gate-" + app.Name}}).
		ReadyWhen(func(runtime.Object) (bool, string) { return open, "the gate is shut" })
	cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"]},
		Data: map[string]string{"owner": app.Name}}).After(gate)
	return []*dependents.Object{gate, cm}, nil
}

// TestAdvRefusedOwnerStaysRefusedWhenTheKeeperNeverCreatedIt: docs/safety.md
// says a refused owner is computed again once the first owner frees the
// object, "without an event of its own". WebApp a keeps ConfigMap
// "shared" but it is not created yet (it waits, ordered after a's gate,
// which is not ready); WebApp b, whose gate is open, is refused it ("it
// is WebApp ns/a's"). a is deleted: "shared" is freed, but as it never
// existed no change of it reaches the loop, which recomputes refused
// owners only on such a change. b stays FAILED, naming an owner that no
// longer exists, and never gets its ConfigMap (periodic healing off, as
// TestDeletedBehindItsBackIsRepaired: with it, a minute later).
func TestAdvRefusedOwnerStaysRefusedWhenTheKeeperNeverCreatedIt(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	noHealing := func(o *dependents.Options) {
		cfg := dependents.DefaultEventLoopConfig()
		cfg.EnablePeriodicHealing = false
		o.EventLoop = &cfg
	}
	_, webapps := advStart(t, t.Context(), "adv2-freed", cmKind, advGated, noHealing)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap shared waiting for its gate", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ConfigMap shared: waiting for")
	})
	b := advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "shared", "open": "true"})
	controlplanetest.Eventually(t, wait, "b refused", func() bool {
		return has(readyMessage(t, webapps, ns, "b"), "failed: ConfigMap shared: it is WebApp")
	})
	if advConfigMap(t, ns, "shared") != nil {
		t.Fatal("ConfigMap shared was created while a's gate is shut")
	}

	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("b's condition: %s", dependentstest.ReadyMessage(context.WithoutCancel(t.Context()), webapps, ns, "b"))
		}
	})
	controlplanetest.Eventually(t, wait, "b's ConfigMap shared, once a freed it", func() bool {
		cm := advConfigMap(t, ns, "shared")
		return cm != nil && strings.Contains(cm.Annotations[dependents.AnnotationOwner], string(b.UID))
	})
}
