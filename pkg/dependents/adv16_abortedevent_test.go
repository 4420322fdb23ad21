package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
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
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) { return zRequirerObjects(ns, app), nil }
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if heldPatchIn(req, ns, fm) && refuse.CompareAndSwap(true, false) {
				return nil, errors.New("held-without patch refused once by the test")
			}
			return next.RoundTrip(req)
		})
	})
	lc := longHealingLoop()
	opts := configMapOptions(fm, &lc)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	startZAndB(t, webapps, ns)

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
