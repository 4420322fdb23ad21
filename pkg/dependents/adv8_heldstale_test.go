package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv8HeldOwnerInheritsAMarkerFromARequirerBeingDeleted: docs/safety.md
// promises that "no new requirer is created on a held owner that was not
// ready before the restart": a held owner's marker is put when a live
// object of the field manager still names it in lariat.dev/depends-on
// ("the scheduler deletes such an object once the marker is gone"). An
// object whose deletion the scheduler asked for, and which a finalizer of
// a user's keeps, still names it. b's ConfigMap RequiresOwner a and
// carries a finalizer; a's ConfigMap stops being ready by its rule, so
// a's marker goes and the scheduler deletes b's ConfigMap: its deletion
// stays under way. At a restart a's handler fails (a held): b's
// ConfigMap on its way out vouches for a's marker, and c's ConfigMap
// (RequiresOwner a, c created while no replica ran) is created on an
// owner that was not ready before the restart.
func TestAdv8HeldOwnerInheritsAMarkerFromARequirerBeingDeleted(t *testing.T) {
	r := newHeldRequirers(t, "adv8-heldstale")
	ns := r.ns
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := r.start(t, ctx)
	advCreateApp(t, webapps, ns, "a", map[string]string{"v": "1"})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	advSetFinalizers(t, t.Context(), ns, "b-cm", advFinalizer)
	t.Cleanup(func() { advSetFinalizers(t, context.WithoutCancel(t.Context()), ns, "b-cm") })

	r.aReady.Store(false)
	touch(t, webapps, ns, "a") // a computed again: its rule now says not ready
	controlplanetest.Eventually(t, wait, "b's ConfigMap being deleted, a not ready", func() bool {
		bcm := advConfigMap(t, ns, "b-cm")
		return bcm != nil && bcm.DeletionTimestamp != nil && strings.Contains(readyMessage(t, webapps, ns, "a"), "a's rule")
	})
	stopAndWait(t, stop, d)

	advCreateApp(t, webapps, ns, "c", map[string]string{})
	r.aFailing.Store(true)
	d, webapps = r.start(t, t.Context())
	controlplanetest.Eventually(t, wait, "the first resync committed, a held, c computed", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are") &&
			readyMessage(t, webapps, ns, "c") != ""
	})
	if advConfigMap(t, ns, "c-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("a was not ready before the restart and is held (%q), yet c's ConfigMap, which RequiresOwner a, "+
			"was created on it; c's condition %q", readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "c"))
	}
}
