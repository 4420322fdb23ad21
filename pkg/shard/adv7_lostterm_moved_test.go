package shard_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv7MovedThenDeletedIsNotCarriedIntoTheNextTerm: a holds an object;
// it is assigned to b (a's informer sees a delete whose final state names
// b) while a's pass over its absence is queued (held in the gate), b
// handles it, and it is deleted while b holds it. a's term then ends with
// that pass undone, and its next term starts. The deletion was b's: the
// next term must not be handed it (its gate would read NotFound, the same
// as for a deletion of its own, and a and b would both run their deletion
// handlers).
func TestAdv7MovedThenDeletedIsNotCarriedIntoTheNextTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	// One worker: the next term's queue serves what its start queued (a
	// carried key) before an object created after it started.
	a := startMember(t, ns, "a", memberOpts{workers: 1})
	b := startMember(t, ns, "b", memberOpts{})
	key := ns + "/moved"
	createCM(t, ns, "moved", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	held, release := a.holdAbsentPasses(key)
	defer release()
	label(t, ns, "moved", b.id(), false) // moved to b
	select {
	case <-held:
	case <-time.After(timeout):
		t.Fatal("no pass of a over the object's absence after it moved to b")
	}
	eventually(t, "b handling the object", func() bool { return len(b.callsFor(key)) > 0 })
	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "moved", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's handlers told the object it held is gone", func() bool { return b.sawDeleted(key) })

	a.leaseProx.Cut()
	eventually(t, "a's term ending without its Lease", func() bool { return !a.running.Load() })
	release()
	a.leaseProx.Restore()
	eventually(t, "a running its next term", func() bool { return a.terms.Load() == 2 && a.running.Load() })
	// A barrier: the next term's one worker served an object created
	// after it started; a carried key was queued at its start, before it.
	createCM(t, ns, "next", a.id())
	eventually(t, "a's next term handling its object", func() bool { return len(a.callsFor(ns+"/next")) > 0 })
	if a.sawDeleted(key) {
		t.Fatalf("%s moved from a to b and was deleted while b held it; a's next term's handlers were given its deletion "+
			"(a's gate passes %+v): a deletion a's informer saw only as a move away was carried into its next term", key, a.passesFor(key))
	}
}
