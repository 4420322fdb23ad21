package dependents_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// adv19FailingUser is a user's handler that, while failing is set, aborts
// every event it is called for, resyncs included, as a handler whose own
// southbound is down for a while does; it counts the resyncs it aborted.
type adv19FailingUser struct {
	failing atomic.Bool
	resyncs atomic.Int32 // resyncs aborted while failing
}

// String implements eventloop.EventHandler.
func (u *adv19FailingUser) String() string { return "adv19-user" }

// HandlesEvent implements eventloop.EventHandler.
func (u *adv19FailingUser) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (u *adv19FailingUser) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler.
func (u *adv19FailingUser) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	if !u.failing.Load() {
		return nil
	}
	u.resyncs.Add(1)
	return eventloop.NewAbortEventError(errors.New("the user's southbound is down"))
}

// Update implements eventloop.EventHandler.
func (u *adv19FailingUser) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	if !u.failing.Load() {
		return "", nil
	}
	return "", eventloop.NewAbortEventError(errors.New("the user's southbound is down"))
}

// TestAdv19MissedEventResyncsInATightLoopWhileTheUsersHandlerFails: a
// registration joined to a user's loop, the user's handler before it.
// The user's handler fails every event for a while (its own southbound
// down), resyncs included. The loop's after-error healing backs off (here
// its first delay is an hour: the loop itself resyncs not once during the
// test). But each aborted event, the registration's resync among them,
// is an event the registration missed (TxnDone, not committed, never
// called), and requestResync asks the loop for a resync again at once:
// the loop resyncs back to back, each resync a snapshot of every cache,
// for as long as the user's handler fails, past the healing's backoff
// and MaxFailedHealings (which count only after-error healings).
func TestAdv19MissedEventResyncsInATightLoopWhileTheUsersHandlerFails(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	user := &adv19FailingUser{}
	lc := eventloop.DefaultConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: time.Hour}
	lc.MaxAfterErrorHealingDelay = eventloop.Duration{Duration: time.Hour}
	j := adv18Join(t, "adv19-storm", lc, adv18OneConfigMap(ns), user)
	advCreateApp(t, j.webapps, ns, "a", nil)
	controlplanetest.Eventually(t, wait, "a's ConfigMap, a ready", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && adv13Ready(t, j.webapps, ns, "a")
	})
	t.Cleanup(func() { user.failing.Store(false) }) // before the loop's stop (cleanups run last first)

	user.failing.Store(true)
	ev := &adv18UserEvent{typ: eventloop.BestEffort, done: make(chan error, 1)}
	if err := j.loop.PushEvent(ev); err != nil {
		t.Fatal(err)
	}
	if err := <-ev.done; err == nil {
		t.Fatal("the user's event was not aborted")
	}
	// A resync asked for by the registration and aborted is asked for
	// again; a handful over a minute would be a backoff, not a storm.
	const storm = 30
	if adv18Within(wait, func() bool { return user.resyncs.Load() >= storm }) {
		t.Errorf("the loop ran %d resyncs while the user's handler failed, its after-error healing an hour away "+
			"(after-error healings failed in a row: %d): the registration asks for a resync again at each one aborted",
			user.resyncs.Load(), j.loop.Status().FailedHealings)
	}
}
