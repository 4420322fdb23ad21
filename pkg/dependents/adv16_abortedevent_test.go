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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv16RequirerCreatedOnAMarkerAnAbortedEventWithdrew: z's ConfigMap
// is ready while another controller's annotation says so. b's ConfigMap
// RequiresOwner z. The annotation goes: the event that judges z not ready
// and withdraws z's marker aborts (b's held-without record, one patch
// refused once). Until the after-error healing resync (its delay set
// long, so that the window is the test's and not the machine's load), the
// next events commit: WebApp c is created, its ConfigMap RequiresOwner z.
// z has not been ready since before c existed, so c's ConfigMap must wait.
// Before (h27a's attack): it was created on the marker the aborted event
// meant to withdraw, and the scheduler kept b's ConfigMap, whose
// requirement was gone.
func TestAdv16RequirerCreatedOnAMarkerAnAbortedEventWithdrew(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv16-aborted"
	var refuse atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"}}).
				ReadyWhen(func(live runtime.Object) (bool, string) {
					cm, ok := live.(*corev1.ConfigMap)
					return ok && cm.Annotations["adv16/ready"] == "yes", "z's controller has not said ready"
				})}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwner(ns, "z")}, nil
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps/") &&
				req.URL.Query().Get("fieldManager") == fm+"-held" && refuse.CompareAndSwap(true, false) {
				return nil, errors.New("held-without patch refused once by the test")
			}
			return next.RoundTrip(req)
		})
	})
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	opts := dependents.Options{FieldManager: fm, Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute, EventLoop: &lc}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	advCreateApp(t, webapps, ns, "z", nil)
	controlplanetest.Eventually(t, wait, "z-cfg", func() bool { return advConfigMap(t, ns, "z-cfg") != nil })
	adv16Annotate(t, ns, "z-cfg", "yes")
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && adv13Ready(t, webapps, ns, "b")
	})

	refuse.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // z not ready: its marker goes, b-cm's record is written first, and refused
	controlplanetest.Eventually(t, wait, "the event judging z not ready aborted", func() bool {
		return loopFailureCount(d, "held without") >= 1
	})
	advCreateApp(t, webapps, ns, "c", nil)
	controlplanetest.Eventually(t, wait, "c's ConfigMap created, or c reported waiting for z", func() bool {
		msg := dependentstest.ReadyMessage(t.Context(), webapps, ns, "c")
		return advConfigMap(t, ns, "c-cm") != nil || strings.Contains(msg, "z")
	})
	if advConfigMap(t, ns, "c-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("z has not been ready since before c was created, yet c's ConfigMap, which RequiresOwner z, was created "+
			"(creates %v; c's condition %q; b-cm still there: %v)", ops(d, kvscheduler.OpCreate),
			dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"), advConfigMap(t, ns, "b-cm") != nil)
	}
}

// adv16Annotate sets the adv16/ready annotation of the ConfigMap by a
// merge patch of its own field manager (another controller's field).
func adv16Annotate(t *testing.T, ns, name, value string) {
	t.Helper()
	adv16AnnotateKey(t, ns, name, "adv16/ready", value)
}

// adv16AnnotateKey sets the ConfigMap's annotation key to value, as
// adv16Annotate.
func adv16AnnotateKey(t *testing.T, ns, name, key, value string) {
	t.Helper()
	body := `{"metadata":{"annotations":{"` + key + `":"` + value + `"}}}`
	if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), name,
		types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "adv16-other"}); err != nil {
		t.Fatal(err)
	}
}
