package dependents_test

import (
	"strings"
	"testing"

	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdv17JoinedRegistrationMissesAnEventAUsersHandlerBeforeItAborts: as
// TestAdv16JoinedRegistrationOutOfStepAfterAUsersHandlerAborts, but the
// user's handler is placed before the registration's on the joined loop
// (nothing in Join or docs/dependents.md asks for an order). The user's
// handler aborts the event in which z's ConfigMap stops being ready: the
// loop stops calling handlers, so the registration's Update is never
// called for it, and TxnDone is told only to the handlers that were
// called. The registration never reads the change in (a fact, not a
// judgement: the undo log keeps facts, but here there is nothing to keep),
// z is not marked stale, and until the healing resync (its delay set long
// to own the window) its picture has z-cfg ready: c's ConfigMap, which
// RequiresOwner z, was created on z's marker while z was not ready (h27b).
// Now the registration is told it missed the event (TxnDone for every
// handler that wants it) and computes no owner until a resync.
func TestAdv17JoinedRegistrationMissesAnEventAUsersHandlerBeforeItAborts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := zRequirers(ns)
	var user *adv16Aborter
	d, webapps := startJoinedWithUser(t, "adv17-before", handler, func(democtl.WebAppController) eventloop.EventHandler {
		user = &adv16Aborter{key: ns + "/z-cfg"}
		return user
	}, true)
	startZAndB(t, webapps, ns)

	user.armed.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // z not ready; the user's handler aborts the event
	controlplanetest.Eventually(t, wait, "the user's handler aborted z-cfg's event", func() bool { return user.did.Load() })
	advCreateApp(t, webapps, ns, "c", nil)
	// The registration, told it missed z-cfg's event, computes no owner
	// until a resync (its answer "waiting for a resync"); c's event is
	// answered so, or c is computed and waits for z.
	controlplanetest.Eventually(t, wait, "c's ConfigMap created, c reported waiting for z, or c's event held for a resync", func() bool {
		return advConfigMap(t, ns, "c-cm") != nil || strings.Contains(dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"), "z") ||
			adv17HeldForAResync(d.Loop(), ns+"/c")
	})
	if advConfigMap(t, ns, "c-cm") != nil {
		t.Errorf("z has not been ready since before c was created, yet c's ConfigMap, which RequiresOwner z, was created "+
			"(c's condition %q; z's %q; b-cm still there: %v)", dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"),
			dependentstest.ReadyMessage(t.Context(), webapps, ns, "z"), advConfigMap(t, ns, "b-cm") != nil)
	}
}

// adv17HeldForAResync tells whether loop's history has the event of
// owner key answered "waiting for a resync" by a handler.
func adv17HeldForAResync(loop *eventloop.Loop, key string) bool {
	for _, r := range loop.History().Records() {
		for _, h := range r.Handlers {
			if h.Change == "waiting for a resync" && strings.Contains(r.Description, key) {
				return true
			}
		}
	}
	return false
}
