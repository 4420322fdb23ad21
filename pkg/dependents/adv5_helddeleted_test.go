package dependents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv5HeldObjectDeletedByHandIsWrittenBackFromTheSnapshot: docs/safety.md
// promises "A held value is never written: the registration's descriptors
// never apply an object at its held value (a drift repair or the periodic
// healing leaves a user's edit of it as it is)". heldValues.wrap turns
// the descriptor's Update of a held value into a no-op, but not its
// Create: a user who deletes a held owner's ConfigMap (the handler does
// not answer, nobody asked for it) has it created again at once, from the
// snapshot the restart read, by the repair of objects deleted behind the
// operator's back. The decision: a held value is never written, neither
// updated nor created, so the hand deletion stays while a's handler does
// not answer, and a's ConfigMap comes back once it does. b, a computed
// owner, is the barrier: its ConfigMap is
// deleted after a's, on the same watch, and its repair comes after a's.
func TestAdv5HeldObjectDeletedByHandIsWrittenBackFromTheSnapshot(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "a" && failing.Load() {
			return nil, errors.New("cannot compute a")
		}
		return advConfigMaps(app)
	}
	fm := "adv5-helddeleted"
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, cmKind, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "b-data"})
	controlplanetest.Eventually(t, wait, "both ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-data") != nil && advConfigMap(t, ns, "b-data") != nil
	})
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	d, webapps = advStart(t, t.Context(), fm, cmKind, handler)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	kube := controlplanetest.Clientset(cp.Config())
	bOld := advConfigMap(t, ns, "b-data")
	for _, name := range []string{"a-data", "b-data"} {
		if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controlplanetest.Eventually(t, wait, "b's ConfigMap repaired", func() bool {
		now := advConfigMap(t, ns, "b-data")
		return now != nil && now.UID != bOld.UID
	})
	if now := advConfigMap(t, ns, "a-data"); now != nil {
		t.Errorf("a is held (%q) and its ConfigMap was deleted by hand, yet it was written back from the restart's "+
			"snapshot: %v (managed fields %v)", readyMessage(t, webapps, ns, "a"), now.Data, now.ManagedFields)
	}
	// Once a's handler answers, what it wants is created.
	failing.Store(false)
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's ConfigMap created once its handler answers", func() bool {
		now := advConfigMap(t, ns, "a-data")
		return now != nil && now.Data["owner"] == "a"
	})
}
