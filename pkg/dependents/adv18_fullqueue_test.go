package dependents_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// adv18SlowAborter is a user's handler placed after the registration's:
// once armed, at the event in which ConfigMap key's adv16/ready
// annotation says "no", it tells reached, waits (as a slow handler does)
// until the test says the loop's queue is full, and aborts the event.
type adv18SlowAborter struct {
	key     string
	armed   atomic.Bool
	reached chan struct{}
	filled  chan struct{}
	// hold, if set, is waited for (up to wait) by the user's handler of
	// each of the user's own events: a slow handler.
	hold func() bool
}

// String implements eventloop.EventHandler.
func (a *adv18SlowAborter) String() string { return "adv18-slow-user" }

// HandlesEvent implements eventloop.EventHandler.
func (a *adv18SlowAborter) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (a *adv18SlowAborter) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: it keeps no values.
func (a *adv18SlowAborter) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}

// Update implements eventloop.EventHandler.
func (a *adv18SlowAborter) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	if _, ok := ev.(*adv18UserEvent); ok && a.hold != nil {
		adv18Within(wait, a.hold)
		return "", nil
	}
	c, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || c.Resource != "v1/ConfigMap" || c.Key != a.key {
		return "", nil
	}
	cm, ok := c.NewValue.(*corev1.ConfigMap)
	if !ok || cm.Annotations["adv16/ready"] != "no" || !a.armed.CompareAndSwap(true, false) {
		return "", nil
	}
	close(a.reached)
	select {
	case <-a.filled:
	case <-time.After(wait):
	}
	return "", eventloop.NewAbortEventError(errors.New("the user's handler cannot handle this event now"))
}

// TestAdv18FullQueueAtAnAbortLetsARetryCreateARequirerOnAWithdrawnMarker:
// docs/safety.md says the owners an aborted transaction computed "are
// computed again by an event pushed at once ..., so that no scheduler
// retry acts on a marker the aborted event judged gone"; computeStaleSoon
// says that should the push fail (a full queue), "the next event that
// computes an owner computes them first all the same". On a joined loop,
// events of the user's own compute no owner. z's ConfigMap is ready while
// an annotation says so; c's ConfigMap RequiresOwner z and its create is
// refused for a while (RETRYING). The annotation goes; the registration
// judges z not ready, and the user's handler after it, slow, aborts the
// event while the user's producer has filled the loop's queue (its own
// events, of no owner). The push of the stale owners fails; the user's
// events drain, none computes z, the healing resync is far (its delay set
// long). c's create is let through: the scheduler's retry creates c-cm
// on z's marker, which the aborted event had judged gone.
func TestAdv18FullQueueAtAnAbortLetsARetryCreateARequirerOnAWithdrawnMarker(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := zRequirers(ns)
	cfg, blockC, created := refusingCWrites(ns)
	lc := eventloop.DefaultConfig()
	lc.QueueSize = 16
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	lc.EnableRetry, lc.EnableExpBackoffRetry, lc.MaxRetryAttempts = true, false, 1000
	lc.DelayRetry = eventloop.Duration{Duration: 2 * time.Second}
	user := &adv18SlowAborter{key: ns + "/z-cfg", reached: make(chan struct{}), filled: make(chan struct{})}
	j := adv18JoinWith(t, adv18Setup{name: "adv18-fullq", lc: lc, handler: handler, after: []eventloop.EventHandler{user}, cfg: cfg})
	advCreateApp(t, j.webapps, ns, "z", nil)
	controlplanetest.Eventually(t, wait, "z-cfg", func() bool { return advConfigMap(t, ns, "z-cfg") != nil })
	adv16Annotate(t, ns, "z-cfg", "yes")
	controlplanetest.Eventually(t, wait, "z ready", func() bool { return adv13Ready(t, j.webapps, ns, "z") })
	blockC.Store(true)
	advCreateApp(t, j.webapps, ns, "c", nil)
	cKey := kubedescriptor.KeyFor(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "c-cm")
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
	// The user's producer fills the queue while the loop is in the event.
	pushed := 0
	for {
		err := j.loop.PushEvent(&adv18UserEvent{typ: eventloop.BestEffort, done: make(chan error, 1)})
		if errors.Is(err, eventloop.ErrQueueFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pushed++
	}
	close(user.filled)
	controlplanetest.Eventually(t, wait, "the user's events processed", func() bool {
		n := 0
		for _, r := range j.loop.History().Records() {
			if r.Name == "adv18-user-event" {
				n++
			}
		}
		return n >= pushed
	})
	blockC.Store(false)
	// The scheduler's retry of c-cm comes due (every DelayRetry) while
	// nothing computes z again; then an owner created computes the stale
	// owners first.
	time.Sleep(5 * lc.DelayRetry.Duration)
	advCreateApp(t, j.webapps, ns, "d", nil)
	controlplanetest.Eventually(t, wait, "c-cm created, or waiting for z", func() bool {
		return created.Load() || j.sched.GetValueStatus(cKey).State == kvscheduler.Pending &&
			strings.Contains(dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "c"), "z")
	})
	if created.Load() {
		t.Errorf("z has not been ready since the event that aborted with the queue full (%d events of the user's queued), "+
			"yet the scheduler's retry created c's ConfigMap, which RequiresOwner z (c's condition %q; z's %q)", pushed,
			dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "c"), dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "z"))
	}
}
