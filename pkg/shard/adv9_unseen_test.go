package shard_test

import (
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv9NeverHandledKeyRecreatedElsewhereIsNotTold: the first pass over
// an object is held in the gate (its handlers never get it, so the key is
// carried with no UID) when a partition ends the term; meanwhile the object
// is deleted and created again for another member. The next term has no
// UID to tell the two objects apart: its handlers must not run for the
// new object, nor be told of a deletion of an object they never had.
func TestAdv9NeverHandledKeyRecreatedElsewhereIsNotTold(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{stopGrace: 200 * time.Millisecond})
	key := ns + "/unseen"
	held, release := a.holdPasses(key)
	defer release()
	createCM(t, ns, "unseen", a.id())
	waitHeld(t, held, "a over the object")
	a.dataProx.Cut()
	a.leaseProx.Cut()
	deleteCM(t, ns, "unseen")
	createCM(t, ns, "unseen", "some-other-member")
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	release()
	eventually(t, "a's next term judging the carried key", func() bool { return len(a.passesFor(key)) > 1 })
	a.createHandled(t, ns, "after")
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	if calls := a.callsFor(key); len(calls) != 0 {
		t.Fatalf("a's handlers ran for %s, which they never had and which is now another member's: %+v", key, calls)
	}
}
