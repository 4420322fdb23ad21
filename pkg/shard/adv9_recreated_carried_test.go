package shard_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv9RecreatedElsewhereDuringAPartitionTellsOnlyTheOldDeletion: a
// partition ends a member's term while an object it held is deleted and
// created again under its name, assigned to another member. The ended
// term carries the key with the UID its handlers were given; the next
// term's gate finds a live object of that name with another UID and must
// read the old object's history, not the new one's: the old object's
// deletion is a's to tell (once), and a's handlers never run for the new
// object, which is another member's.
func TestAdv9RecreatedElsewhereDuringAPartitionTellsOnlyTheOldDeletion(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := a.createHandled(t, ns, "reborn")

	a.dataProx.Cut()
	a.leaseProx.Cut()
	deleteCM(t, ns, "reborn")
	createCM(t, ns, "reborn", "some-other-member")
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
	// A barrier: an object created after the telling is handled, so the
	// queue served whatever it held of the key before it.
	a.createHandled(t, ns, "after")
	deleted, live := 0, 0
	for _, c := range a.callsFor(key) {
		switch {
		case c.deleted:
			deleted++
		case c.id != "" && c.id != a.callsFor(key)[0].id:
			live++ // a call of the next term for the new object
		}
	}
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	if deleted != 1 || live != 0 {
		t.Fatalf("a's handlers: told %s gone %d times (want 1), ran %d times for the object recreated for another member (want 0): %+v", key, deleted, live, a.callsFor(key))
	}
}

// TestAdv9RecreatedForTheEndedTermTellsTheOldDeletion: as above, but the
// object is created again with the ended term's own assignment (a sharder
// that has not yet seen the term end), so both histories carry labels the
// ended term's test accepts. The live object of that name has another
// UID: the old object's deletion is still told, once.
func TestAdv9RecreatedForTheEndedTermTellsTheOldDeletion(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	oldID := a.id()
	key := a.createHandled(t, ns, "reborn")

	a.dataProx.Cut()
	a.leaseProx.Cut()
	deleteCM(t, ns, "reborn")
	createCM(t, ns, "reborn", oldID)
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
	a.createHandled(t, ns, "after")
	deleted := 0
	for _, c := range a.callsFor(key) {
		if c.deleted {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("a's handlers told %s gone %d times, want once: %+v", key, deleted, a.callsFor(key))
	}
}
