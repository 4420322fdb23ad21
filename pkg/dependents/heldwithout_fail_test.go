package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestFailedHeldWithoutRecordHoldsBackTheMarkersWithdrawal: the
// lariat.dev/held-without record of a requirer whose marker goes is
// written before the commit that takes the marker away. Here that write
// fails in an update: the API server path refuses every PATCH of the
// registration's "<fm>-held" field manager, and the requirer's DELETE
// stalls until the stop (as in
// TestAdv8StopBetweenAMarkersWithdrawalAndItsRequirersDelete). The
// marker must not be withdrawn while its record is missing: the event is
// not committed (named in the loop's history), and once the patches pass
// again the healing resync writes the record and only then withdraws it.
// At the restart (a's handler failing, a held) b's ConfigMap, left by the
// stalled DELETE, must not vouch for a's marker: c's ConfigMap, which
// RequiresOwner a, is not created.
func TestFailedHeldWithoutRecordHoldsBackTheMarkersWithdrawal(t *testing.T) {
	r := newHeldRequirers(t, "heldwithout-fail")
	ns := r.ns
	var stall, refuse atomic.Bool
	stalled, refused := make(chan struct{}), make(chan struct{})
	var stalledOnce, refusedOnce sync.Once
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			onBCM := strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/b-cm")
			if refuse.Load() && onBCM && req.Method == http.MethodPatch && req.URL.Query().Get("fieldManager") == r.fm+"-held" {
				refusedOnce.Do(func() { close(refused) })
				return nil, errors.New("held-without patch refused by the test")
			}
			if stall.Load() && onBCM && req.Method == http.MethodDelete {
				stalledOnce.Do(func() { close(stalled) })
				<-req.Context().Done() // a connection that stalls until the request is given up
				return nil, errors.New("stalled by the test: " + req.Context().Err().Error())
			}
			return next.RoundTrip(req)
		})
	})
	opts := dependents.Options{FieldManager: r.fm, Kinds: r.kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, r.fm, r.handler, opts)
	advCreateApp(t, webapps, ns, "a", map[string]string{"v": "1"})
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })

	refuse.Store(true)
	stall.Store(true)
	r.aReady.Store(false)
	touch(t, webapps, ns, "a") // a computed again: its rule now says not ready
	select {
	case <-refused:
	case <-time.After(wait):
		t.Fatal("the registration never patched b's ConfigMap's held-without record")
	}
	// Either the withdrawal went ahead (the DELETE stalls) or the event
	// failed without committing, naming the record it could not write.
	controlplanetest.Eventually(t, wait, "b's DELETE sent, or the event failed naming the record", func() bool {
		select {
		case <-stalled:
			return true
		default:
			return loopFailureNames(d, "held without")
		}
	})
	if cm := advConfigMap(t, ns, "b-cm"); cm == nil || cm.DeletionTimestamp != nil {
		t.Fatal("b's ConfigMap should still be there")
	}
	refuse.Store(false)
	select {
	case <-stalled:
	case <-time.After(wait):
		t.Fatal("the scheduler never sent the DELETE of b's ConfigMap once its record could be written")
	}
	stopAndWait(t, stop, d)
	bcm := advConfigMap(t, ns, "b-cm")
	if bcm == nil || bcm.DeletionTimestamp != nil {
		t.Fatal("b's ConfigMap should be left as it was by the stalled DELETE")
	}

	advCreateApp(t, webapps, ns, "c", nil)
	r.aFailing.Store(true)
	d, webapps = r.start(t, t.Context())
	controlplanetest.Eventually(t, wait, "the first resync committed, a held, c computed", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are") &&
			readyMessage(t, webapps, ns, "c") != ""
	})
	if advConfigMap(t, ns, "c-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("a's marker was withdrawn while b's ConfigMap's held-without record could not be written "+
			"(b's ConfigMap left with %s=%q); at the restart, a held (%q), c's ConfigMap, which RequiresOwner a, "+
			"was created on it; c's condition %q", dependents.AnnotationHeldWithout,
			bcm.Annotations[dependents.AnnotationHeldWithout], readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "c"))
	}
}

// loopFailureNames tells whether an event of d's loop failed with an
// error containing sub.
func loopFailureNames(d *dependents.Dependents, sub string) bool {
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if h.Error != nil && strings.Contains(h.Error.Error(), sub) {
				return true
			}
		}
	}
	return false
}
