package dependents_test

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestFailedVouchReadIsNoVerdict: a was available (latched) and b's
// ConfigMap RequiresOwnerAvailable a. At the restart a's rule says not
// ready, so only the latch from before the restart keeps b's ConfigMap,
// and reading that latch needs the API server's answer with managedFields
// (vouch.go). While that read fails, the first resync must not commit (a
// failed read is no "no evidence": b's ConfigMap would be deleted); once
// it passes, the latch is inherited and b's ConfigMap kept.
func TestFailedVouchReadIsNoVerdict(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "vouch-fails"
	var aReady, refuse atomic.Bool
	aReady.Store(true)
	handler := latchHandler(ns, "a", &aReady, nil)
	latchOwner(t, ns, fm, handler, "a", []string{"b"}, nil)

	aReady.Store(false)
	refuse.Store(true)
	d, webapps := restartRefusingVouch(t, ns, fm, handler, &refuse)
	if committedResync(d) || advConfigMap(t, ns, "b-cm") == nil {
		t.Fatalf("the first resync committed (or b's ConfigMap went) while a's latch could not be read; b's condition %q",
			readyMessage(t, webapps, ns, "b"))
	}
	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a resync committed once the read passes", func() bool { return committedResync(d) })
	if advConfigMap(t, ns, "b-cm") == nil || slices.Contains(ops(d, kvscheduler.OpDelete), "ConfigMap b-cm") {
		t.Errorf("a was available before the restart, yet b's ConfigMap, which RequiresOwnerAvailable a, was deleted; "+
			"b's condition %q", readyMessage(t, webapps, ns, "b"))
	}
}
