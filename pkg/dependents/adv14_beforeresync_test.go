package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestAdv14ChangesWhileFirstResyncAbortsAreNotLost: the first resync after
// a restart aborts (the vouch list is refused), and the Update events that
// arrive meanwhile are answered "waiting for the first resync". While it
// aborts: b's config changes, c's ConfigMap is deleted by hand, and owner d
// is deleted. Once the list passes, the committed resync must show all
// three: b's ConfigMap updated, c's recreated, d's deleted.
func TestAdv14ChangesWhileFirstResyncAbortsAreNotLost(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv14-before"
	var zReady, refuse atomic.Bool
	zReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return zReady.Load(), "z's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"},
			Data: map[string]string{"v": app.Spec.Config["v"]}}).RequiresOwnerAvailable(ns, "z")}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "z", nil)
	for _, n := range []string{"b", "c", "d"} {
		advCreateApp(t, webapps, ns, n, map[string]string{"v": "1"})
	}
	controlplanetest.Eventually(t, wait, "b, c, d's ConfigMaps, once z is available", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "c-cm") != nil && advConfigMap(t, ns, "d-cm") != nil
	})
	stopAndWait(t, stop, d)

	zReady.Store(false)
	refuse.Store(true)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			vouchRead := req.Method == http.MethodGet && q.Get("watch") == "" && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps") &&
				(q.Get("labelSelector") == kubedescriptor.LabelManagedBy+"="+fm || strings.Contains(req.URL.Path, "/configmaps/"))
			if refuse.Load() && vouchRead {
				return nil, errors.New("read refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	d, webapps = dependentstest.Start(t, t.Context(), cfg, nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "the first resync failing on the refused read", func() bool {
		return loopFailureNames(d, "vouches for readiness")
	})
	kube := controlplanetest.Clientset(cp.Config())
	// The status writer may update b meanwhile: a conflict is retried.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := webapps.Get(t.Context(), ns, "b", metav1.GetOptions{})
		if err != nil {
			return err
		}
		b.Spec.Config["v"] = "2"
		_, err = webapps.Update(t.Context(), b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), "c-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "d", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The events reach the loop while its first resync still aborts.
	controlplanetest.Eventually(t, wait, "a second failing resync after the changes", func() bool {
		n := 0
		for _, r := range d.Loop().History().Records() {
			for _, h := range r.Handlers {
				if h.Error != nil && strings.Contains(h.Error.Error(), "vouches for readiness") {
					n++
				}
			}
		}
		return n >= 2
	})
	if committedResync(d) {
		t.Fatal("a resync committed while the vouch read was refused")
	}
	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a resync committed once the read passes", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "b's ConfigMap updated, c's recreated, d's deleted", func() bool {
		bcm, ccm, dcm := advConfigMap(t, ns, "b-cm"), advConfigMap(t, ns, "c-cm"), advConfigMap(t, ns, "d-cm")
		ok := bcm != nil && bcm.Data["v"] == "2" && ccm != nil && dcm == nil
		if !ok {
			t.Logf("b-cm %v, c-cm present %v, d-cm present %v; b's condition %q", bcm != nil && bcm.Data["v"] == "2",
				ccm != nil, dcm != nil, readyMessage(t, webapps, ns, "b"))
		}
		return ok
	})
}
