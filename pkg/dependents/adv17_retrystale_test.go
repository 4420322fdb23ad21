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
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv17RetryCreatesARequirerOnAMarkerAnAbortedEventWithdrew: the
// owners an aborted event computed are computed again "by the next event
// that computes any owner" (docs/dependents.md); until then the scheduler
// keeps the marker the aborted event meant to withdraw, and the scheduler
// does not wait for an event to act: it retries failed values on its own.
// z's ConfigMap is ready while another controller's annotation says so;
// b's and c's ConfigMaps RequiresOwner z. c's create is refused for a
// while (the API server unavailable for it, say): c-cm is RETRYING. The
// annotation goes: the event that judges z not ready aborts (b's
// held-without record refused once), z is stale, and no event computes
// an owner after it (the healing resync's delay set long, to own the
// window). c's create is no longer refused: before, the scheduler's next
// retry created c-cm on z's marker, though z had not been ready since
// before it (h27b). Now the stale owners are computed again by an event
// pushed at the abort, before the retry. Without the abort, z's marker is withdrawn with the event and the
// retry finds c-cm's requirement unmet (PENDING, "waiting for z").
func TestAdv17RetryCreatesARequirerOnAMarkerAnAbortedEventWithdrew(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv17-retry"
	var refuse, blockC atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) { return zRequirerObjects(ns, app), nil }
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			path := req.URL.Path
			inNS := strings.Contains(path, "/namespaces/"+ns+"/configmaps")
			if heldPatchIn(req, ns, fm) && refuse.CompareAndSwap(true, false) {
				return nil, errors.New("held-without patch refused once by the test")
			}
			if inNS && blockC.Load() && req.Method != http.MethodGet &&
				(strings.HasSuffix(path, "/c-cm") || req.Method == http.MethodPost) {
				return nil, errors.New("c-cm's create refused by the test while blockC is set")
			}
			return next.RoundTrip(req)
		})
	})
	lc := longHealingLoop()
	lc.EnableRetry, lc.EnableExpBackoffRetry, lc.MaxRetryAttempts = true, false, 1000
	lc.DelayRetry = eventloop.Duration{Duration: 2 * time.Second}
	opts := configMapOptions(fm, &lc)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	startZAndB(t, webapps, ns)

	blockC.Store(true)
	advCreateApp(t, webapps, ns, "c", nil)
	cKey := kubedescriptor.KeyFor(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "c-cm")
	controlplanetest.Eventually(t, wait, "c-cm's create refused, retried", func() bool {
		st := d.Scheduler().GetValueStatus(cKey).State
		return st == kvscheduler.Retrying || st == kvscheduler.Failed
	})
	refuse.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // z not ready: its marker goes, b-cm's record is written first, and refused
	controlplanetest.Eventually(t, wait, "the event judging z not ready aborted", func() bool {
		return loopFailureCount(d, "held without") >= 1
	})
	blockC.Store(false)
	controlplanetest.Eventually(t, wait, "c-cm created, or waiting for z", func() bool {
		st := d.Scheduler().GetValueStatus(cKey)
		return slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") ||
			st.State == kvscheduler.Pending && strings.Contains(dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"), "z")
	})
	if slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("z has not been ready since the event that aborted, yet the scheduler's retry created c's ConfigMap, "+
			"which RequiresOwner z (c's condition %q; z's %q; c-cm there: %v)",
			dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"), dependentstest.ReadyMessage(t.Context(), webapps, ns, "z"),
			advConfigMap(t, ns, "c-cm") != nil)
	}
}
