package shard_test

import (
	"testing"

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
	key := a.createHandled(t, ns, "moved")

	held, release := a.holdAbsentPasses(key)
	defer release()
	label(t, ns, "moved", b.id(), false) // moved to b
	waitHeld(t, held, "a over the object's absence after it moved to b")
	eventually(t, "b handling the object", func() bool { return len(b.callsFor(key)) > 0 })
	deleteCM(t, ns, "moved")
	eventually(t, "b's handlers told the object it held is gone", func() bool { return b.sawDeleted(key) })

	a.leaseProx.Cut()
	a.termEnded(t)
	release()
	a.nextTerm(t)
	// A barrier: the next term's one worker served an object created
	// after it started; a carried key was queued at its start, before it.
	a.createHandled(t, ns, "next")
	if a.sawDeleted(key) {
		t.Fatalf("%s moved from a to b and was deleted while b held it; a's next term's handlers were given its deletion "+
			"(a's gate passes %+v): a deletion a's informer saw only as a move away was carried into its next term", key, a.passesFor(key))
	}
}
