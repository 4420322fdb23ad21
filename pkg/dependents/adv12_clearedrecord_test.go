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
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv12RecordClearedForAPutThatNeverCommitted: the held-without
// record is brought up to date before the commit, both ways: a marker
// that goes is added (safe: written before the withdrawal), but a marker
// put again is removed from the list before the put is committed too. When
// the same transaction then aborts (another held object's record cannot
// be written), the put is never committed, yet the first object's record
// says the marker was put: it vouches for it at the next restart.
//
// b and c are held after a restart where a is not ready: both ConfigMaps
// (RequiresOwner a) list a's marker. a turns ready while c's record
// cannot be written: b's record is cleared, the event aborts, a's marker
// is never put. a turns not ready again while no record can be written,
// and the replica stops. At the next restart (a, b, c held) b's
// ConfigMap vouches for a's marker, which was not put at any commit since
// the earlier restart, and d's ConfigMap, RequiresOwner a, is created on
// it.
func TestAdv12RecordClearedForAPutThatNeverCommitted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv12-cleared"
	var aReady, aFailing, othersFailing atomic.Bool
	var refuseC, refuseAll atomic.Bool
	aReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a" && aFailing.Load(), app.Name != "a" && app.Name != "d" && othersFailing.Load():
			return nil, errors.New("cannot compute " + app.Name)
		case app.Name == "a":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"},
				Data: map[string]string{"image": app.Spec.Image}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return aReady.Load(), "a's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwner(ns, "a")}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	record := func(name string) string {
		cm := advConfigMap(t, ns, name)
		if cm == nil {
			t.Fatalf("%s was deleted", name)
		}
		return cm.Annotations[dependents.AnnotationHeldWithout]
	}
	aMarker := "owner/" + ns + "/a"

	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's and c's ConfigMaps, once a is ready", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "c-cm") != nil
	})
	stopAndWait(t, stop, d)

	// First restart: a not ready, b and c held, both recorded without a.
	aReady.Store(false)
	othersFailing.Store(true)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			held := req.Method == http.MethodPatch && req.URL.Query().Get("fieldManager") == fm+"-held"
			onC := strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/c-cm")
			if held && (refuseAll.Load() || refuseC.Load() && onC) {
				return nil, errors.New("held-without patch refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "first restart: b and c held, recorded without a's marker", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "b"), "held as they are") &&
			strings.Contains(record("b-cm"), aMarker) && strings.Contains(record("c-cm"), aMarker)
	})

	// a ready, but c's record cannot be written: the event aborts.
	refuseC.Store(true)
	aReady.Store(true)
	touchImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "b's record cleared for a's marker, c's refused", func() bool {
		return record("b-cm") == "" && loopFailureNames(d, "cannot record on ConfigMap c-cm that it is held without \"\"")
	})
	// The record may leave a's marker out only once a transaction that
	// puts it has committed: then b vouches truly at the next restart.
	markerKey := "dependents/" + fm + "/" + aMarker
	committed := d.Scheduler().GetValueStatus(markerKey).State == kvscheduler.Configured
	if !committed {
		t.Errorf("b's record was cleared for a's marker, which the scheduler does not have (%s): no transaction that puts it committed",
			d.Scheduler().GetValueStatus(markerKey).State)
	}
	// a not ready again, no record can be written; then the stop.
	refuseAll.Store(true)
	aReady.Store(false)
	failed := loopFailureCount(d, "")
	touchImage(t, webapps, ns, "a", "app:3")
	controlplanetest.Eventually(t, wait, "a judged not ready again, b's record refused", func() bool {
		return loopFailureCount(d, "") > failed && loopFailureNames(d, "cannot record on ConfigMap b-cm")
	})
	stopAndWait(t, stop, d)
	bRecord := record("b-cm")
	putOps := slices.Clone(ops(d, kvscheduler.OpCreate))

	// Second restart: a, b, c held. d RequiresOwner a.
	aFailing.Store(true)
	advCreateApp(t, webapps, ns, "d", map[string]string{})
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "second restart committed, a held, d computed", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are") &&
			readyMessage(t, webapps, ns, "d") != ""
	})
	if !committed && (advConfigMap(t, ns, "d-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap d-cm")) {
		t.Errorf("a's marker was never put since the first restart (a not ready there, its one ready verdict aborted, "+
			"its last verdict not ready; creates of that run %v), yet b's ConfigMap's record was cleared (%s=%q) "+
			"and at the second restart, a held (%q), d's ConfigMap, which RequiresOwner a, was created on it",
			putOps, dependents.AnnotationHeldWithout, bRecord, readyMessage(t, webapps, ns, "a"))
	}
}
