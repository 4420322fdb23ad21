package shard_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// refusedAbsent reports whether a gate pass of r over key was given no
// cached object and refused it without an error: the key is forgotten.
func refusedAbsent(r *member, key string) bool {
	for _, p := range r.passesFor(key) {
		if !p.cached && !p.handle && p.err == nil {
			return true
		}
	}
	return false
}

// TestCarriedKeyMovedAwayDuringAPartitionIsNotToldByTheNextTerm: a member's
// term ends in a partition while an object it held moves to another member,
// which is told of its deletion. The next term, handed the key with no
// delete event seen, reads the object's history: it moved away before it
// went, so the deletion was the other member's, and the next term's
// handlers are not told of it (two members never handle one deletion).
func TestCarriedKeyMovedAwayDuringAPartitionIsNotToldByTheNextTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	b := startMember(t, ns, "b", memberOpts{})
	key := a.createHandled(t, ns, "moved")

	a.dataProx.Cut()
	a.leaseProx.Cut()
	label(t, ns, "moved", b.id(), false) // the sharder moves it once a's Lease expired
	eventually(t, "b handling the object", func() bool { return len(b.callsFor(key)) > 0 })
	deleteCM(t, ns, "moved")
	eventually(t, "b's handlers told the object is gone", func() bool { return b.sawDeleted(key) })
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	eventually(t, "a's next term refusing the key it was handed", func() bool { return refusedAbsent(a, key) })
	if a.sawDeleted(key) {
		t.Fatalf("a's handlers were told of the deletion of %s, which was b's: it moved to b before it went", key)
	}
}

// TestCarriedKeyStillAssignedToTheEndedTermIsToldWhenDeleted: a member's
// term ends in a partition, and the object it held is still assigned to
// the ended term's ID when the next term starts (the sharder has not moved
// it yet). The next term keeps the key (its gate retries quietly) rather
// than forgetting an object no live member holds, so that its deletion,
// before the sharder moved it, still reaches the next term's handlers.
func TestCarriedKeyStillAssignedToTheEndedTermIsToldWhenDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := a.createHandled(t, ns, "stuck")

	a.dataProx.Cut()
	a.leaseProx.Cut()
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	eventually(t, "a's next term holding the key while the object is the ended term's", func() bool {
		for _, p := range a.passesFor(key) {
			if !p.cached && p.err != nil {
				return true
			}
		}
		return false
	})
	deleteCM(t, ns, "stuck")
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
}
