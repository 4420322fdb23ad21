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

// TestAdv8StopBetweenAMarkersWithdrawalAndItsRequirersDelete: before.go
// reads a marker as put before the restart when an object still names it,
// because "the scheduler deletes such an object once the marker is gone".
// The two are not one step: the marker goes in the scheduler's memory,
// then the requirer's DELETE goes to the API server. b's ConfigMap
// RequiresOwner a; a's ConfigMap stops being ready by its rule, so a's
// marker goes and the scheduler sends the DELETE of b's ConfigMap, which
// the network holds (a stalled connection) until the replica stops. No
// finalizer: the object is simply still there, naming a's marker. At the
// restart a's handler fails (a held), b's ConfigMap vouches for a marker
// that was gone, and c's ConfigMap (RequiresOwner a, c created while no
// replica ran) is created on an owner that was not ready before the
// restart.
func TestAdv8StopBetweenAMarkersWithdrawalAndItsRequirersDelete(t *testing.T) {
	r := newHeldRequirers(t, "adv8-stoppeddelete")
	ns := r.ns
	var stall atomic.Bool
	stalled := make(chan struct{})
	var stalledOnce sync.Once
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if stall.Load() && req.Method == http.MethodDelete && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/b-cm") {
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

	stall.Store(true)
	r.aReady.Store(false)
	touch(t, webapps, ns, "a") // a computed again: its rule now says not ready
	select {
	case <-stalled:
	case <-time.After(wait):
		t.Fatal("the scheduler never sent the DELETE of b's ConfigMap")
	}
	stopAndWait(t, stop, d)
	if cm := advConfigMap(t, ns, "b-cm"); cm == nil || cm.DeletionTimestamp != nil {
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
		t.Errorf("a was not ready when the replica stopped and is held (%q), yet c's ConfigMap, which RequiresOwner a, "+
			"was created on it; c's condition %q", readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "c"))
	}
}
