package dependents_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A held owner's readiness across a restart (before.go, held.go).

// TestHeldOwnerNotReadyBeforeTheRestartGetsNoNewRequirer: a's ConfigMap
// is not ready by a's rule (ReadyWhen), so b's ConfigMap, which
// RequiresOwner a, waits. After a restart a's handler fails: a is held,
// its rule unknown. Its ConfigMap is ready by DefaultReady (it exists),
// but a was not ready before the restart, so b's ConfigMap is still not
// created; once a's handler answers with a rule that calls it ready, it
// is.
func TestHeldOwnerNotReadyBeforeTheRestartGetsNoNewRequirer(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).
				RequiresOwner(ns, "a")}, nil
		case failing.Load():
			return nil, errors.New("cannot compute a")
		}
		image := app.Spec.Image
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"}}).
			ReadyWhen(func(runtime.Object) (bool, string) { return image == "app:2", "ready at app:2 only" })}, nil
	}
	fm := "restart-heldnotready"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b waiting for a, a's ConfigMap created", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "b"), "waiting for WebApp "+ns+"/a to be ready") &&
			advConfigMap(t, ns, "a-cfg") != nil
	})
	stopAndWait(t, stop, d)
	failing.Store(true)
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	// The first resync's commit is where b's ConfigMap is created, if it is.
	if now := advConfigMap(t, ns, "b-cm"); now != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap b-cm") {
		t.Fatalf("a was not ready by its rule before the restart and is held (%q), yet b's ConfigMap was created "+
			"on it (%v); b's condition %q", readyMessage(t, webapps, ns, "a"), now, readyMessage(t, webapps, ns, "b"))
	}
	failing.Store(false)
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a's handler calls it ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil
	})
}

// TestHeldOwnersObjectDeletedByHandTakesItsMarkerDown: a is ready by its
// rule and b's ConfigMap RequiresOwner a. After a restart a's handler
// fails: a is held, and keeps the owner marker it had before, so b's
// ConfigMap stays. Then a's held ConfigMap is deleted by hand: a held
// object is not created again while the handler does not answer, and an
// object that is gone is ready by no rule, so a is not ready and b's
// ConfigMap goes, as it would for a's object deleted while a's handler
// answers. Once it answers, both are created again.
func TestHeldOwnersObjectDeletedByHandTakesItsMarkerDown(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).
				RequiresOwner(ns, "a")}, nil
		case failing.Load():
			return nil, errors.New("cannot compute a")
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"}})}, nil
	}
	fm := "restart-helddeleted"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	before := advConfigMap(t, ns, "b-cm")
	stopAndWait(t, stop, d)
	failing.Store(true)
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if now := advConfigMap(t, ns, "b-cm"); now == nil || now.UID != before.UID {
		t.Fatalf("a, held, was ready before the restart, yet b's ConfigMap was deleted (now %v)", now)
	}
	if err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "a-cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "b's ConfigMap deleted: a's held object is gone", func() bool {
		return advConfigMap(t, ns, "b-cm") == nil
	})
	controlplanetest.Eventually(t, wait, "b waiting for a", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "b"), "waiting for WebApp "+ns+"/a to be ready")
	})
	if advConfigMap(t, ns, "a-cfg") != nil {
		t.Fatal("a's held ConfigMap, deleted by hand, was created again while a's handler fails")
	}
	failing.Store(false)
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's and b's ConfigMaps created again once a's handler answers", func() bool {
		return advConfigMap(t, ns, "a-cfg") != nil && advConfigMap(t, ns, "b-cm") != nil
	})
}
