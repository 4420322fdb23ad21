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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv4HeldObjectDeletedByItsRequiresOwner: WebApp a's ConfigMap
// RequiresOwner b (b's StatefulSet). While no replica runs, b's
// StatefulSet stops being ready. After the restart a's handler fails, so a
// is held: held.go promises "a held object is never deleted nor changed"
// and that the held owner's objects are "put as they are". But the held
// value is the live object's projection, which keeps its
// lariat.dev/depends-on annotation naming b's owner marker, absent while
// b is not ready: the scheduler deletes a's held ConfigMap, on the
// strength of what a handler that no longer answers last asked.
func TestAdv4HeldObjectDeletedByItsRequiresOwner(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			labels := map[string]string{"app": "b-db"}
			return []*dependents.Object{dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "b-db"},
				Spec: appsv1.StatefulSetSpec{ServiceName: "b-db", Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, "postgres:17")}})}, nil
		case failing.Load():
			return nil, errors.New("cannot compute a")
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cm"},
			Data: map[string]string{"image": app.Spec.Image}}).RequiresOwner(ns, "b")
		return []*dependents.Object{cm}, nil
	}
	fm := "adv4-heldreq"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's StatefulSet", func() bool { return exists(t, "StatefulSet", ns, "b-db") })
	setDBReady(t, ns, "b-db", 1)
	controlplanetest.Eventually(t, wait, "a's ConfigMap, once b is ready", func() bool { return advConfigMap(t, ns, "a-cm") != nil })
	before := advConfigMap(t, ns, "a-cm")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	setDBReady(t, ns, "b-db", 0)
	failing.Store(true)
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger()}
	d, webapps = dependentstest.Start(t, t.Context(), cp.Config(), nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if now := advConfigMap(t, ns, "a-cm"); now == nil || now.UID != before.UID {
		t.Errorf("a is held (%q), yet its ConfigMap a-cm was deleted (now %v)", readyMessage(t, webapps, ns, "a"), now)
	}
}
