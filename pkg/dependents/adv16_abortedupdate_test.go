package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv16RequirerCreatedOnTheOldSpecAfterAnAbortedUpdate: a's ConfigMap
// a-x carries a's image and is ready while another controller's
// annotation adv16/ready-for names that image. a's spec changes to image
// app:2 and asks for a-y, which Requires a-x: a-y must wait until the
// loop sees a-x at its new spec ("waits for ConfigMap a-x to be seen at
// its new spec"), and then for a-x to be ready at app:2, which no one
// ever says. The event of a's change aborts (a held-without record of
// b's, the API server refusing the patch). Before (h27a's attack): the
// loop kept its desired picture of a (a-x at app:2) but forgot that a-x
// was being updated; the next event that computed a (ComputeAgain,
// patches passing again) saw nothing changing, put a-y on a-x's marker
// judged at app:1, and a-y was created before a-x was ever seen at app:2.
func TestAdv16RequirerCreatedOnTheOldSpecAfterAnAbortedUpdate(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv16-oldspec"
	var refuse atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"}}).
				ReadyWhen(annotatedReady("not said ready"))}, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).
				RequiresOwner(ns, "z")}, nil
		}
		x := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-x"},
			Data: map[string]string{"image": app.Spec.Image}}).
			ReadyWhen(func(live runtime.Object) (bool, string) {
				cm, ok := live.(*corev1.ConfigMap)
				return ok && cm.Annotations["adv16/ready-for"] == cm.Data["image"], "not ready at its image"
			})
		objs := []*dependents.Object{x}
		if app.Spec.Config["probe"] == "on" {
			objs = append(objs, dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-y"}}).Requires(x))
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
	lc := longHealingLoop()
	opts := configMapOptions(fm, &lc)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	advCreateApp(t, webapps, ns, "z", nil)
	advCreateApp(t, webapps, ns, "a", map[string]string{"probe": "off"})
	controlplanetest.Eventually(t, wait, "z-cfg and a-x", func() bool {
		return advConfigMap(t, ns, "z-cfg") != nil && advConfigMap(t, ns, "a-x") != nil
	})
	adv16Annotate(t, ns, "z-cfg", "yes")
	adv16AnnotateKey(t, ns, "a-x", "adv16/ready-for", "app:1")
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, a and b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && adv13Ready(t, webapps, ns, "b") && adv13Ready(t, webapps, ns, "a")
	})

	refuse.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // every event now needs b-cm's record, and aborts
	controlplanetest.Eventually(t, wait, "an event aborted", func() bool { return loopFailureCount(d, "held without") >= 1 })
	adv16SetSpec(t, webapps, ns, "a", "app:2", "on") // a-x to app:2, a-y wanted: this event aborts too
	controlplanetest.Eventually(t, wait, "the event computing a's change aborted", func() bool {
		return adv16Aborted(d, ns+"/a: ", " of 2")
	})
	refuse.Store(false)
	if err := d.ComputeAgain(ns + "/a"); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a-x at app:2 and a-y created or a's condition naming it", func() bool {
		x := advConfigMap(t, ns, "a-x")
		return x != nil && x.Data["image"] == "app:2" &&
			(advConfigMap(t, ns, "a-y") != nil || strings.Contains(dependentstest.ReadyMessage(t.Context(), webapps, ns, "a"), "a-y"))
	})
	if slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap a-y") {
		t.Errorf("a-x was never ready at app:2, yet a-y, which Requires it, was created (creates %v; a's condition %q)",
			ops(d, kvscheduler.OpCreate), dependentstest.ReadyMessage(t.Context(), webapps, ns, "a"))
	}
}

// adv16SetSpec sets the WebApp's image and its "probe" config (a new
// generation).
func adv16SetSpec(t *testing.T, webapps democtl.WebAppController, ns, name, image, probe string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = image
		app.Spec.Config["probe"] = probe
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// adv16Aborted tells whether an event of d's loop whose handler's note
// contains every one of subs aborted on a held-without record.
func adv16Aborted(d *dependents.Dependents, subs ...string) bool {
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if h.Error == nil || !strings.Contains(h.Error.Error(), "held without") {
				continue
			}
			all := true
			for _, sub := range subs {
				all = all && strings.Contains(h.Change, sub)
			}
			if all {
				return true
			}
		}
	}
	return false
}
