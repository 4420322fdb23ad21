package shard_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv7DeletionQueuedWhenATermEndsReachesTheNextTerm: a member's
// object is deleted; its cache drops it and the pass that would tell the
// handlers is queued (here held in the gate, as behind busy workers) when
// the member's term ends (its Lease cannot be renewed). The replica lives
// on and Join runs its next term. Under leader election the restarted
// factory's controller keeps the keys its handlers may not have seen the
// end of and tells them (docs/replicas.md, core.md: "deletions made just
// before the stop whose events the stop dropped"); under sharding
// docs/replicas.md promises "A deletion reaches only the member that held
// the object ... the one it was assigned to when it went does". But Join
// builds a new factory for each term, which knows nothing of the last
// one's keys, and the sharder has nothing to move (the object is gone):
// the deletion of an object the replica held reaches no handler of it, nor
// of any other member, ever. Join now carries such a deletion (its
// informer saw it while the object was the term's) into the next term,
// whose handlers are told of it once.
func TestAdv7DeletionQueuedWhenATermEndsReachesTheNextTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := a.createHandled(t, ns, "dropped")

	held, release := a.holdAbsentPasses(key)
	defer release()
	deleteCM(t, ns, "dropped")
	waitHeld(t, held, "a over the deleted object")
	a.leaseProx.Cut()
	a.termEnded(t)
	release()
	a.nextTerm(t)
	// The next term works: it handles an object assigned to it.
	a.createHandled(t, ns, "next")
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
	// Told once: a barrier object created after the telling is handled
	// (the queue served what was queued before it), and still one telling.
	a.createHandled(t, ns, "after")
	deleted := 0
	for _, c := range a.callsFor(key) {
		if c.deleted {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("a's handlers were told %d times that %s is gone (calls %+v), want once", deleted, key, a.callsFor(key))
	}
}
