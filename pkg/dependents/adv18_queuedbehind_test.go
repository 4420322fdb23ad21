package dependents_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv18RecomputeQueuedBehindASlowEventLetsARetryCreateARequirer: as
// TestAdv18FullQueueAtAnAbortLetsARetryCreateARequirerOnAWithdrawnMarker,
// without a full queue: the push of the stale owners succeeds, but an
// event pushed at once is queued behind every event already waiting, not
// "behind the aborted one". One event of the user's is waiting when the
// user's handler aborts the event that judged z not ready; the user's
// handler of that event is slow (it returns once c-cm exists or waits
// for z, or after a minute). While it runs, the scheduler's retry, on
// its own, creates c's ConfigMap (RequiresOwner z) on the marker the
// aborted event judged gone: the ComputeAgain comes too late.
func TestAdv18RecomputeQueuedBehindASlowEventLetsARetryCreateARequirer(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := zRequirers(ns)
	cfg, blockC, created := refusingCWrites(ns)
	lc := eventloop.DefaultConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	lc.EnableRetry, lc.EnableExpBackoffRetry, lc.MaxRetryAttempts = true, false, 1000
	lc.DelayRetry = eventloop.Duration{Duration: 2 * time.Second}
	user := &adv18SlowAborter{key: ns + "/z-cfg", reached: make(chan struct{}), filled: make(chan struct{})}
	j := adv18JoinWith(t, adv18Setup{name: "adv18-behind", lc: lc, handler: handler, after: []eventloop.EventHandler{user}, cfg: cfg})
	cKey := kubedescriptor.KeyFor(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "c-cm")
	cDecided := func() bool { return created.Load() || j.sched.GetValueStatus(cKey).State == kvscheduler.Pending }
	// A slow handler: long enough for the scheduler's retry of c-cm
	// (every DelayRetry) to come due several times while it runs.
	var since time.Time // set by the first call, on the loop's goroutine
	user.hold = func() bool {
		if since.IsZero() {
			since = time.Now()
		}
		return cDecided() || time.Since(since) > 5*lc.DelayRetry.Duration
	}
	advCreateApp(t, j.webapps, ns, "z", nil)
	controlplanetest.Eventually(t, wait, "z-cfg", func() bool { return advConfigMap(t, ns, "z-cfg") != nil })
	adv16Annotate(t, ns, "z-cfg", "yes")
	controlplanetest.Eventually(t, wait, "z ready", func() bool { return adv13Ready(t, j.webapps, ns, "z") })
	blockC.Store(true)
	advCreateApp(t, j.webapps, ns, "c", nil)
	controlplanetest.Eventually(t, wait, "c-cm's create refused, retried", func() bool {
		st := j.sched.GetValueStatus(cKey).State
		return st == kvscheduler.Retrying || st == kvscheduler.Failed
	})

	user.armed.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // z not ready; the user's handler after the registration's aborts the event
	select {
	case <-user.reached:
	case <-time.After(wait):
		t.Fatal("the user's handler never saw z-cfg's event")
	}
	// One event of the user's waits in the queue when the event aborts.
	if err := j.loop.PushEvent(&adv18UserEvent{typ: eventloop.BestEffort, done: make(chan error, 1)}); err != nil {
		t.Fatal(err)
	}
	close(user.filled)
	controlplanetest.Eventually(t, wait, "the event judging z not ready aborted", func() bool {
		for _, r := range j.loop.History().Records() {
			for _, h := range r.Handlers {
				if h.Handler == user.String() && h.Error != nil {
					return true
				}
			}
		}
		return false
	})
	// Only now, once nothing of the aborted event can still reach the
	// scheduler: c-cm's create may go through.
	blockC.Store(false)
	controlplanetest.Eventually(t, wait, "c-cm created, or waiting for z", func() bool {
		return created.Load() || j.sched.GetValueStatus(cKey).State == kvscheduler.Pending &&
			strings.Contains(dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "c"), "z")
	})
	controlplanetest.Eventually(t, wait, "the user's slow event processed", func() bool {
		for _, r := range j.loop.History().Records() {
			if r.Name == "adv18-user-event" {
				return true
			}
		}
		return false
	})
	if created.Load() {
		t.Errorf("z has not been ready since the event that aborted, yet while the user's event queued before the stale "+
			"owners' ComputeAgain ran, the scheduler's retry created c's ConfigMap, which RequiresOwner z (the ComputeAgain may have deleted it since; c's condition %q; z's %q)",
			dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "c"), dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "z"))
	}
}
