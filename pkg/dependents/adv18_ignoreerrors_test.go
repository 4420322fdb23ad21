package dependents_test

import (
	"testing"

	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdv18JoinedRegistrationStopsForGoodAfterAUsersIgnoreErrorsEventAborts:
// a registration joined to a user's loop (default configuration: no
// periodic healing), the user's handler before it. The user pushes an
// event of its own, BestEffortIgnoreErrors ("BestEffort without the
// healing resync"), which its handler aborts: nothing of the registration's
// is in that event, yet the registration, which wants every event, is told
// it missed one (TxnDone, not committed, never called) and waits for a
// resync that the loop never schedules for such an event. From then on
// it computes no owner: a WebApp created afterwards never gets its
// ConfigMap, its condition never says why.
func TestAdv18JoinedRegistrationStopsForGoodAfterAUsersIgnoreErrorsEventAborts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	user := &adv18UserAborter{}
	j := adv18Join(t, "adv18-ignore", eventloop.DefaultConfig(), adv18OneConfigMap(ns), user)
	advCreateApp(t, j.webapps, ns, "a", nil)
	controlplanetest.Eventually(t, wait, "a's ConfigMap, a ready", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && adv13Ready(t, j.webapps, ns, "a")
	})

	ev := &adv18UserEvent{typ: eventloop.BestEffortIgnoreErrors, done: make(chan error, 1)}
	if err := j.loop.PushEvent(ev); err != nil {
		t.Fatal(err)
	}
	if err := <-ev.done; err == nil {
		t.Fatal("the user's event was not aborted")
	}
	advCreateApp(t, j.webapps, ns, "n", nil)
	ok := adv18Within(wait, func() bool { return advConfigMap(t, ns, "n-cm") != nil })
	if !ok {
		t.Errorf("%v after the user's own BestEffortIgnoreErrors event was aborted (nothing of the registration's in it), "+
			"n, created afterwards, has no ConfigMap: the registration answered n's event %q (held: %v) and no resync came; "+
			"n's condition: %q", wait, "waiting for a resync", adv17HeldForAResync(j.loop, ns+"/n"),
			dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "n"))
	}
}

// TestAdv18JoinedRegistrationStopsForGoodAfterAUsersRevertedEvent: as
// TestAdv18JoinedRegistrationStopsForGoodAfterAUsersIgnoreErrorsEventAborts,
// but the user's event is RevertOnFailure and the user's handler, before
// the registration's, fails it with a plain error: the loop stops calling
// handlers, commits nothing, reverts the handlers that completed (none),
// and schedules no healing (a reverted event needs none). The
// registration, told it missed the event, waits for a resync that never
// comes; a WebApp created afterwards never gets its ConfigMap.
func TestAdv18JoinedRegistrationStopsForGoodAfterAUsersRevertedEvent(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	user := &adv18UserAborter{plain: true}
	j := adv18Join(t, "adv18-reverted", eventloop.DefaultConfig(), adv18OneConfigMap(ns), user)
	advCreateApp(t, j.webapps, ns, "a", nil)
	controlplanetest.Eventually(t, wait, "a's ConfigMap, a ready", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && adv13Ready(t, j.webapps, ns, "a")
	})

	ev := &adv18UserEvent{typ: eventloop.RevertOnFailure, done: make(chan error, 1)}
	if err := j.loop.PushEvent(ev); err != nil {
		t.Fatal(err)
	}
	if err := <-ev.done; err == nil {
		t.Fatal("the user's event did not fail")
	}
	advCreateApp(t, j.webapps, ns, "n", nil)
	if !adv18Within(wait, func() bool { return advConfigMap(t, ns, "n-cm") != nil }) {
		t.Errorf("%v after the user's own RevertOnFailure event failed in the user's handler and was reverted (nothing of the "+
			"registration's in it), n, created afterwards, has no ConfigMap: the registration answered n's event %q (held: %v) "+
			"and no resync came; n's condition: %q", wait, "waiting for a resync", adv17HeldForAResync(j.loop, ns+"/n"),
			dependentstest.ReadyMessage(t.Context(), j.webapps, ns, "n"))
	}
}
