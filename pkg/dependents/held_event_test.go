package dependents_test

import (
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestHeldOwnerKeepsItsObjectsThroughTheirNextEvent: a held owner's
// handler fails again at every event of its objects. A label another
// manager puts on a held ConfigMap is such an event; the held state must
// survive it (before, it had no owner UID, and the failed computation
// read it as a deleted owner's state and withdrew, so deleted, every held
// object). The sync point: c's ConfigMap, deleted after the label was put
// (same watch, so its event is handled after a-first's), is created
// again.
func TestHeldOwnerKeepsItsObjectsThroughTheirNextEvent(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	_, webapps, ns, before := heldRestart(t, "held-event", cp.Config(), &failing)
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "c"})
	controlplanetest.Eventually(t, wait, "c's ConfigMap", func() bool { return advConfigMap(t, ns, "c-first") != nil })
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	label := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a-first","labels":{"tagged":"yes"}}}`
	if _, err := cms.Patch(t.Context(), "a-first", types.ApplyPatchType, []byte(label),
		metav1.PatchOptions{FieldManager: "a-tagger"}); err != nil {
		t.Fatal(err)
	}
	old := advConfigMap(t, ns, "c-first")
	if err := cms.Delete(t.Context(), "c-first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "c's ConfigMap created again", func() bool {
		now := advConfigMap(t, ns, "c-first")
		return now != nil && now.UID != old.UID
	})
	for i, name := range []string{"a-first", "a-second"} {
		if now := advConfigMap(t, ns, name); now == nil || now.UID != before[i].UID {
			t.Errorf("a is held (%q), yet its ConfigMap %s is gone or replaced after an event of a-first (now %v)",
				readyMessage(t, webapps, ns, "a"), name, now)
		}
	}
}
