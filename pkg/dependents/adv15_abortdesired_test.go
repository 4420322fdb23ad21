package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
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
	fm := "adv15-abort-" + ns[len(ns)-5:] // per run (-count)
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
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := startThrough(t, ctx, fm, handler, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		if refuse.Load() && req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps/") &&
			req.URL.Query().Get("fieldManager") == fm+"-held" {
			return nil, errors.New("held-without patch refused by the test")
		}
		return next.RoundTrip(req)
	})
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
		return loopFailureCount(d, "held without") >= 1
	})
	// Each change of b must reach the loop (and abort) before the
	// patches pass again: else the loop computes b as it last saw it.
	bFailed := func() int { return computeAgainCounts(d, "WebApp "+ns+"/b updated").otherFailed }
	n := bFailed()
	setConfig(t, webapps, ns, "b", "extra", "y")
	controlplanetest.Eventually(t, wait, "b's event (extra y) failing too", func() bool { return bFailed() > n })
	n = bFailed()
	setConfig(t, webapps, ns, "b", "extra", "x")
	controlplanetest.Eventually(t, wait, "b's event (extra x) failing too", func() bool { return bFailed() > n })
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
