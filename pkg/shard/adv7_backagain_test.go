package shard_test

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv7ObjectMovedAwayAndBackIsHandedAsDeletedOnce: member a holds an
// object, acknowledges its drain (its gate forgets the key once the pass
// over the relabel finds it is someone else's), the object goes to b and
// comes back to a, and is then deleted while a holds it. a's handlers are
// told it is gone, once: the controller's records of held keys follow the
// object out and back in. (Tried in the seventh round; it holds.)
func TestAdv7ObjectMovedAwayAndBackIsHandedAsDeletedOnce(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := ns + "/roundtrip"
	createCM(t, ns, "roundtrip", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	label(t, ns, "roundtrip", a.id(), true)
	// While the object is unassigned, a's gate keeps the key (a quiet
	// retry), so that a deletion before its reassignment reaches a.
	eventually(t, "a acknowledging the drain and its gate deciding the absence", func() bool {
		for _, p := range a.passesFor(key) {
			if !p.cached && !p.handle && (p.err == nil || errors.Is(p.err, shard.ErrHandedOverUnassigned)) {
				return !a.cached(key)
			}
		}
		return false
	})
	label(t, ns, "roundtrip", shard.MemberID("b"), false)
	calls := len(a.callsFor(key))
	label(t, ns, "roundtrip", a.id(), false)
	eventually(t, "a handling the object back", func() bool { return len(a.callsFor(key)) > calls })
	if a.sawDeleted(key) {
		t.Fatalf("a's handlers were told the object is gone while it moved away and back: %+v", a.callsFor(key))
	}

	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "roundtrip", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's handlers told the object is gone", func() bool { return a.sawDeleted(key) })
	// A second telling would come from the same queue: wait for a pass of
	// another key queued after it to have run.
	createCM(t, ns, "after", a.id())
	eventually(t, "a handling an object created after the deletion", func() bool { return len(a.callsFor(ns+"/after")) > 0 })
	n := 0
	for _, c := range a.callsFor(key) {
		if c.deleted {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("a's handlers were told %d times that the object is gone, want once: %+v", n, a.callsFor(key))
	}
}
