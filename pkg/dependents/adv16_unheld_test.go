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
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdv16HeldObjectWrittenBackAfterAResyncThatAborted: after a restart a's
// handler fails, so a is held: a-cm, which RequiresOwner z, is kept as it
// is, only ordered after z's marker, never taken down by it
// (TestAdv4HeldObjectDeletedByItsRequiresOwner). A healing resync in which
// a's handler answers aborts (w-cm's held-without record refused): nothing
// is committed and the loop goes back to a held. That resync dropped a's
// held values from the set the descriptors leave as they are, and the
// undo puts them back. a's handler fails again, the next resync goes
// through with a still held. a-cm is then deleted by hand: a held object
// deleted by hand stays deleted while its owner's handler cannot say what
// it wants (TestAdv5HeldObjectDeletedByHandIsWrittenBackFromTheSnapshot).
// Before the undo (h27a's attack): the repair wrote the restart's
// snapshot back.
func TestAdv16HeldObjectWrittenBackAfterAResyncThatAborted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv16-unheld"
	var refuse, failA atomic.Bool
	var failedA atomic.Int32 // computations of a that failed
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z" || app.Name == "v":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cfg"}}).
				ReadyWhen(annotatedReady("not said ready"))}, nil
		case app.Name == "a" && failA.Load():
			failedA.Add(1)
			return nil, errors.New("cannot compute a")
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwner(ns, app.Spec.Config["needs"])}, nil
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if refuse.Load() && heldPatchIn(req, ns, fm) {
				return nil, errors.New("held-without patch refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: time.Second}
	opts := configMapOptions(fm, &lc)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	advCreateApp(t, webapps, ns, "z", nil)
	advCreateApp(t, webapps, ns, "v", nil)
	controlplanetest.Eventually(t, wait, "z-cfg, v-cfg", func() bool {
		return advConfigMap(t, ns, "z-cfg") != nil && advConfigMap(t, ns, "v-cfg") != nil
	})
	adv16Annotate(t, ns, "z-cfg", "yes")
	adv16Annotate(t, ns, "v-cfg", "yes")
	advCreateApp(t, webapps, ns, "a", map[string]string{"needs": "z"})
	advCreateApp(t, webapps, ns, "w", map[string]string{"needs": "v"})
	controlplanetest.Eventually(t, wait, "a-cm and w-cm", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && advConfigMap(t, ns, "w-cm") != nil
	})
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}

	failA.Store(true)
	ctx2, stop2 := context.WithCancel(t.Context())
	defer stop2()
	d, webapps = dependentstest.Start(t, ctx2, cfg, nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "a held", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	failA.Store(false) // the healing resync computes a
	refuse.Store(true)
	adv16Annotate(t, ns, "v-cfg", "no") // w-cm's record needed: the event and its healing resync abort
	controlplanetest.Eventually(t, wait, "a healing resync aborted", func() bool { return adv16ResyncAborted(d) >= 0 })
	failA.Store(true)
	// An event that computed a before failA changed must not commit: the
	// loop is serialized, so once a computation of a failed, every event
	// that computed it before has ended (aborted on the refused record).
	// Since the aborted resync, a is computed again by every event that
	// computes an owner (it is stale), ComputeAgain among them.
	n := failedA.Load()
	if err := d.ComputeAgain(ns + "/a"); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a computed, failing", func() bool { return failedA.Load() > n })
	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a resync committed after it, a held", func() bool {
		return adv16ResyncCommittedAfter(d, adv16ResyncAborted(d)) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "a-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a-cm's deletion repaired", func() bool { return adv16Noted(d, "repaired ", "a-cm") })
	if now := advConfigMap(t, ns, "a-cm"); now != nil {
		t.Errorf("a is held (%q), yet its ConfigMap a-cm, deleted by hand, was written back from the restart's snapshot "+
			"(managed fields %v)", readyMessage(t, webapps, ns, "a"), now.ManagedFields)
	}
}

// adv16Noted tells whether a handler of d's loop noted a change
// containing every one of subs.
func adv16Noted(d *dependents.Dependents, subs ...string) bool {
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
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

// adv16ResyncAborted returns the index in d's loop history of the last
// resync that aborted on a held-without record, -1 for none.
func adv16ResyncAborted(d *dependents.Dependents) int {
	last := -1
	for i, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if r.Method.IsResync() && h.Error != nil && strings.Contains(h.Error.Error(), "held without") {
				last = i
			}
		}
	}
	return last
}

// adv16ResyncCommittedAfter tells whether a resync after the record at
// index i of d's loop history went through.
func adv16ResyncCommittedAfter(d *dependents.Dependents, i int) bool {
	for j, r := range d.Loop().History().Records() {
		failed := false
		for _, h := range r.Handlers {
			failed = failed || h.Error != nil
		}
		if j > i && r.Method.IsResync() && r.Txn != nil && !failed {
			return true
		}
	}
	return false
}
