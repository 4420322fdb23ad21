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

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestOwnersComputedAgainAfterAnAbortAreNotPushedInALoop: an aborted event
// pushes one event that computes its owners again (the scheduler must not
// act on what the aborted event judged gone), but when that event aborts
// too, for the same cause (a held-without record the API server cannot
// take), it must not push another: each would abort in turn, and the loop
// would spin, sending the failing request again as fast as it fails,
// past the after-error healing's delay and its bound on failures. So the
// events that compute again are never more than the other events that
// aborted.
func TestOwnersComputedAgainAfterAnAbortAreNotPushedInALoop(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "computeagain-spin-" + ns[len(ns)-5:]
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
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).RequiresOwner(ns, "z")}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute} // no healing resync during the test
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := startThroughWith(t, ctx, fm, handler, &lc, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		if refuse.Load() && req.Method == http.MethodPatch && req.URL.Query().Get("fieldManager") == fm+"-held" {
			return nil, errors.New("held-without patch refused by the test")
		}
		return next.RoundTrip(req)
	})
	advCreateApp(t, webapps, ns, "z", nil)
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, b ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && adv13Ready(t, webapps, ns, "b")
	})

	refuse.Store(true)
	zReady.Store(false)
	touchImage(t, webapps, ns, "z", "app:2") // b-cm's record must be written, and cannot
	controlplanetest.Eventually(t, wait, "an event failing on the held-without record", func() bool {
		return loopFailureCount(d, "held without") >= 1
	})
	advCreateApp(t, webapps, ns, "c", nil)
	controlplanetest.Eventually(t, wait, "c's event handled (aborted too: z is computed first)", func() bool {
		return computeAgainCounts(d, "/c created").other > 0
	})
	if n := computeAgainCounts(d, ""); n.again > n.aborted {
		t.Errorf("%d events computed owners again after aborts, for %d other events that aborted: "+
			"each one that aborted pushed another (loop failures so far: %d)", n.again, n.aborted, loopFailureCount(d, "held without"))
	}
}

// computeAgainCounts counts, in d's loop history, the aborted events that
// compute owners again (again), the other aborted events (aborted), and
// the other events whose description contains sub (other; otherFailed:
// those that failed).
func computeAgainCounts(d *dependents.Dependents, sub string) (n struct{ again, aborted, other, otherFailed int }) {
	for _, r := range d.Loop().History().Records() {
		failed := false
		for _, h := range r.Handlers {
			failed = failed || h.Error != nil
		}
		switch {
		case strings.HasPrefix(r.Name, "ComputeAgain"):
			if failed {
				n.again++
			}
		case failed:
			n.aborted++
			fallthrough
		default:
			if sub != "" && strings.Contains(r.Description, sub) {
				n.other++
				if failed {
					n.otherFailed++
				}
			}
		}
	}
	return n
}
