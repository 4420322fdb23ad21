package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv6HeldRequirerVouchesForAMarkerAcrossTwoRestarts: readiness after
// a restart is read from the objects that require it (before.go), and a
// held object is kept while what it requires is absent. b's ConfigMap
// RequiresOwner a, created while a was ready. At a first restart a is no
// longer ready by its rule and b's handler fails: b's ConfigMap is held,
// kept. At a second restart b's handler answers and a's fails (a held):
// b's ConfigMap still names a's owner marker, so a inherits a marker it
// did not have before the second restart, and c's ConfigMap, which
// RequiresOwner a too, was created on it. Now the first restart records
// on b's held ConfigMap that it is kept without a's marker
// (dependents.AnnotationHeldWithout), and the second takes no marker
// from it.
func TestAdv6HeldRequirerVouchesForAMarkerAcrossTwoRestarts(t *testing.T) {
	r := newHeldRequirers(t, "adv6-heldvouch")
	ns := r.ns
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := r.start(t, ctx)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	stopAndWait(t, stop, d)

	r.aReady.Store(false)
	r.bFailing.Store(true)
	ctx, stop = context.WithCancel(t.Context())
	d, webapps = r.start(t, ctx)
	controlplanetest.Eventually(t, wait, "first restart: a not ready, b held", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "b"), "held as they are") &&
			strings.Contains(readyMessage(t, webapps, ns, "a"), "a's rule")
	})
	if advConfigMap(t, ns, "b-cm") == nil {
		t.Fatal("b's held ConfigMap was deleted at the first restart")
	}
	controlplanetest.Eventually(t, wait, "b's held ConfigMap recorded as kept without a's marker", func() bool {
		cm := advConfigMap(t, ns, "b-cm")
		return cm != nil && cm.Annotations[dependents.AnnotationHeldWithout] != ""
	})
	stopAndWait(t, stop, d)

	advCreateApp(t, webapps, ns, "c", map[string]string{})
	r.bFailing.Store(false)
	r.aFailing.Store(true)
	d, webapps = r.start(t, t.Context())
	controlplanetest.Eventually(t, wait, "second restart: a held", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if now := advConfigMap(t, ns, "c-cm"); now != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("a was not ready before the second restart and is held (%q), yet c's ConfigMap was created on it; "+
			"c's condition %q", readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "c"))
	}
}
