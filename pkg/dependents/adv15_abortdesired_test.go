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
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv15DesiredChangesInAbortedEventsAreNotCommittedLate: an Update that
// aborts (the held-without record of b's ConfigMap cannot be written)
// leaves the loop's desired picture of b as it computed it, not as it was
// committed. While every event and healing resync aborts, b's extra
// children change from {x} to {y} and back to {x}. Once the patches pass
// again: x was never deleted (same UID), y never created or gone, b's
// condition True.
func TestAdv15DesiredChangesInAbortedEventsAreNotCommittedLate(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv15-abort"
	var zReady, refuse atomic.Bool
	zReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"},
				Data: map[string]string{"image": app.Spec.Image}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return zReady.Load(), "z's rule" })}, nil
		}
		objs := []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwner(ns, "z")}
		for e := range strings.SplitSeq(app.Spec.Config["extra"], ",") {
			if e != "" {
				objs = append(objs, dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-" + e}}))
			}
		}
		return objs, nil
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if refuse.Load() && req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps/") &&
				req.URL.Query().Get("fieldManager") == fm+"-held" {
				return nil, errors.New("held-without patch refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	advCreateApp(t, webapps, ns, "z", nil)
	advCreateApp(t, webapps, ns, "b", map[string]string{"extra": "x"})
	controlplanetest.Eventually(t, wait, "b's ConfigMaps, b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "b-x") != nil && adv13Ready(t, webapps, ns, "b")
	})
	xUID := advConfigMap(t, ns, "b-x").UID

	refuse.Store(true)
	zReady.Store(false)
	touchImage(t, webapps, ns, "z", "app:2") // z not available: b-cm's record must be written, and cannot
	controlplanetest.Eventually(t, wait, "an event failing on the held-without record", func() bool {
		return adv15Failures(d, "held without") >= 1
	})
	n := adv15Failures(d, "held without")
	adv15SetExtra(t, webapps, ns, "b", "y")
	controlplanetest.Eventually(t, wait, "a later event failing too", func() bool { return adv15Failures(d, "held without") > n })
	n = adv15Failures(d, "held without")
	adv15SetExtra(t, webapps, ns, "b", "x")
	controlplanetest.Eventually(t, wait, "a later event failing too", func() bool { return adv15Failures(d, "held without") > n+1 })
	if cm := advConfigMap(t, ns, "b-y"); cm != nil {
		t.Errorf("b-y created while every event aborted")
	}
	refuse.Store(false)
	zReady.Store(true)
	touchImage(t, webapps, ns, "z", "app:3")
	controlplanetest.Eventually(t, wait, "b-cm and b-x there, b-y not, b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "b-x") != nil && advConfigMap(t, ns, "b-y") == nil &&
			adv13Ready(t, webapps, ns, "b")
	})
	if x := advConfigMap(t, ns, "b-x"); x.UID != xUID {
		t.Errorf("b-x deleted and created again while b wanted it (ops: deletes %v)", ops(d, kvscheduler.OpDelete))
	}
	if strings.Contains(strings.Join(ops(d, kvscheduler.OpCreate), ";"), "b-y") {
		t.Errorf("b-y created from an aborted picture: creates %v", ops(d, kvscheduler.OpCreate))
	}
}

// adv15Failures counts the handler errors of d's loop containing sub.
func adv15Failures(d *dependents.Dependents, sub string) int {
	n := 0
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if h.Error != nil && strings.Contains(h.Error.Error(), sub) {
				n++
			}
		}
	}
	return n
}

// adv15SetExtra sets the WebApp's "extra" config (a new generation).
func adv15SetExtra(t *testing.T, webapps democtl.WebAppController, ns, name, extra string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config["extra"] = extra
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
