package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestFailedVouchReadIsNoVerdict: a was available (latched) and b's
// ConfigMap RequiresOwnerAvailable a. At the restart a's rule says not
// ready, so only the latch from before the restart keeps b's ConfigMap,
// and reading that latch needs the API server's answer with managedFields
// (vouch.go). While that read fails, the first resync must not commit (a
// failed read is no "no evidence": b's ConfigMap would be deleted); once
// it passes, the latch is inherited and b's ConfigMap kept.
func TestFailedVouchReadIsNoVerdict(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "vouch-fails"
	var aReady, refuse atomic.Bool
	aReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return aReady.Load(), "a's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwnerAvailable(ns, "a")}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", nil)
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is available", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	stopAndWait(t, stop, d)

	aReady.Store(false)
	refuse.Store(true)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			// Any read of a ConfigMap of the namespace with managedFields
			// that is not the informers' (which carry no selector):
			// a list of the field manager's, or a single object's.
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
	if committedResync(d) || advConfigMap(t, ns, "b-cm") == nil {
		t.Fatalf("the first resync committed (or b's ConfigMap went) while a's latch could not be read; b's condition %q",
			readyMessage(t, webapps, ns, "b"))
	}
	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a resync committed once the read passes", func() bool { return committedResync(d) })
	if advConfigMap(t, ns, "b-cm") == nil || slices.Contains(ops(d, kvscheduler.OpDelete), "ConfigMap b-cm") {
		t.Errorf("a was available before the restart, yet b's ConfigMap, which RequiresOwnerAvailable a, was deleted; "+
			"b's condition %q", readyMessage(t, webapps, ns, "b"))
	}
}
