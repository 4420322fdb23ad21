package dependents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv5HeldOwnerJudgedByDefaultReadyTakesDownItsRequirer: WebApp a's
// StatefulSet is ready by a's own rule (ReadyWhen: ready once it exists),
// and WebApp b's ConfigMap RequiresOwner a, so it is created. Nothing
// changes on the server but a restart, after which a's handler fails: a
// is held, and a held owner's objects are judged by their kind's
// DefaultReady (held.go: "so that what other owners require of it (its
// owner marker) is not taken down by the restart"). DefaultReady finds
// the StatefulSet not ready (its controller has reported nothing), so a's
// owner marker is absent and the first resync deletes b's ConfigMap,
// which b, whose handler answers, still wants, on a readiness nobody
// asked for: the restart alone took it down.
func TestAdv5HeldOwnerJudgedByDefaultReadyTakesDownItsRequirer(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"},
				Data: map[string]string{"image": app.Spec.Image}}).RequiresOwner(ns, "a")}, nil
		case failing.Load():
			return nil, errors.New("cannot compute a")
		}
		labels := map[string]string{"app": "a-db"}
		db := dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a-db"},
			Spec: appsv1.StatefulSetSpec{ServiceName: "a-db", Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, "postgres:17")}}).
			ReadyWhen(func(runtime.Object) (bool, string) { return true, "ready once it exists" })
		return []*dependents.Object{db}, nil
	}
	fm := "adv5-heldready"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready by its rule", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil
	})
	before := advConfigMap(t, ns, "b-cm")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger()}
	d, webapps = dependentstest.Start(t, t.Context(), cp.Config(), nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if now := advConfigMap(t, ns, "b-cm"); now == nil || now.UID != before.UID {
		t.Errorf("only a restart happened (a held: %q), yet b's ConfigMap b-cm, which b still wants, was deleted "+
			"(now %v); b's condition: %q", readyMessage(t, webapps, ns, "a"), now, readyMessage(t, webapps, ns, "b"))
	}
}
