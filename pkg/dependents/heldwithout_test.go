package dependents_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

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
	r := newHeldRequirers(t, "heldwithout")
	ns := r.ns
	without := func() (string, bool) {
		cm := advConfigMap(t, ns, "b-cm")
		if cm == nil {
			t.Fatal("b's ConfigMap was deleted")
		}
		v, ok := cm.Annotations[dependents.AnnotationHeldWithout]
		return v, ok
	}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := r.start(t, ctx)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	if v, ok := without(); ok {
		t.Errorf("b's ConfigMap, never held, carries %s=%q", dependents.AnnotationHeldWithout, v)
	}
	stopAndWait(t, stop, d)

	r.aReady.Store(false)
	r.bFailing.Store(true)
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = r.start(t, ctx)
	controlplanetest.Eventually(t, wait, "first restart: b held, recorded as kept without a's marker", func() bool {
		v, _ := without()
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "b"), "held as they are") &&
			strings.Contains(v, "owner/"+ns+"/a")
	})
	r.aReady.Store(true)
	touchImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a ready again: the record gone", func() bool {
		_, ok := without()
		return !ok
	})
	r.aReady.Store(false)
	touchImage(t, webapps, ns, "a", "app:3")
	controlplanetest.Eventually(t, wait, "a not ready again: the record back", func() bool {
		v, _ := without()
		return strings.Contains(v, "owner/"+ns+"/a")
	})
	stopAndWait(t, stop, d)

	r.aReady.Store(true)
	r.bFailing.Store(false)
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = r.start(t, ctx)
	controlplanetest.Eventually(t, wait, "second restart: b's ConfigMap applied, the record cleared", func() bool {
		// Empty or gone: the apply takes the record over empty, and a
		// later apply may drop the empty annotation.
		v, _ := without()
		return committedResync(d) && v == ""
	})
	stopAndWait(t, stop, d)

	r.aFailing.Store(true)
	r.bFailing.Store(true)
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	d, webapps = r.start(t, t.Context())
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
