package dependents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestHeldRequirerVouchesOnlyForAMarkerPutWhenTheReplicaStopped: the
// record a held requirer carries (dependents.AnnotationHeldWithout)
// follows the marker while the requirer is held, and an applied requirer
// is evidence again. b's ConfigMap RequiresOwner a. At a first restart b's
// handler fails (b held) and a is not ready: the held ConfigMap records
// a's marker as absent; a ready again, the record goes; a not ready again,
// it is back. At a second restart a is ready and b answers: its
// ConfigMap, applied, is cleared. At a third restart both handlers fail
// (both held): b's ConfigMap shows a's marker was put when the replica
// stopped, so a keeps it and c's ConfigMap, which RequiresOwner a, is
// created (the record does not take away evidence that holds).
func TestHeldRequirerVouchesOnlyForAMarkerPutWhenTheReplicaStopped(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var aReady, aFailing, bFailing atomic.Bool
	aReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a" && aFailing.Load(), app.Name == "b" && bFailing.Load():
			return nil, errors.New("cannot compute " + app.Name)
		case app.Name == "a":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"},
				Data: map[string]string{"image": app.Spec.Image}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return aReady.Load(), "a's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwner(ns, "a")}, nil
	}
	fm := "heldwithout"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	without := func() (string, bool) {
		cm := advConfigMap(t, ns, "b-cm")
		if cm == nil {
			t.Fatal("b's ConfigMap was deleted")
		}
		v, ok := cm.Annotations[dependents.AnnotationHeldWithout]
		return v, ok
	}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	if v, ok := without(); ok {
		t.Errorf("b's ConfigMap, never held, carries %s=%q", dependents.AnnotationHeldWithout, v)
	}
	stopAndWait(t, stop, d)

	aReady.Store(false)
	bFailing.Store(true)
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = advStart(t, ctx, fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "first restart: b held, recorded as kept without a's marker", func() bool {
		v, _ := without()
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "b"), "held as they are") &&
			strings.Contains(v, "owner/"+ns+"/a")
	})
	aReady.Store(true)
	touchImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a ready again: the record gone", func() bool {
		_, ok := without()
		return !ok
	})
	aReady.Store(false)
	touchImage(t, webapps, ns, "a", "app:3")
	controlplanetest.Eventually(t, wait, "a not ready again: the record back", func() bool {
		v, _ := without()
		return strings.Contains(v, "owner/"+ns+"/a")
	})
	stopAndWait(t, stop, d)

	aReady.Store(true)
	bFailing.Store(false)
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = advStart(t, ctx, fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "second restart: b's ConfigMap applied, the record cleared", func() bool {
		// Empty or gone: the apply takes the record over empty, and a
		// later apply may drop the empty annotation.
		v, _ := without()
		return committedResync(d) && v == ""
	})
	stopAndWait(t, stop, d)

	aFailing.Store(true)
	bFailing.Store(true)
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "third restart: a held, c's ConfigMap created on the marker b's vouches for", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are") &&
			advConfigMap(t, ns, "c-cm") != nil
	})
}

// touchImage sets the image of WebApp ns/name, which computes it again.
func touchImage(t *testing.T, webapps democtl.WebAppController, ns, name, image string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = image
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
