package shard_test

import (
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv8DeletionBeingToldPastTheStopGraceReachesTheNextTerm: a member's
// object is deleted and the pass that tells its handlers has begun (it
// read the store, found the object gone, and is in the gate: a slow API
// server, a slow gate or handler) when the member's term ends. The pass
// outlives the stop grace, so Wait returns (StillRunningError) and the
// factory hands over its untold deletions (CarriedDeletions) before the
// pass ends: heldUntold skipped the key, since a pass "is telling" it. The
// pass then fails with the ended term's context; its retry goes to the
// dead run's queue (toldEnd queues it in a controller that never starts
// again). Before: Join's promise ("A deletion of an object a term held ... whose
// telling the term's end dropped (queued behind busy workers, or failed
// with the term's context), is handed to the next term's factory, whose
// handlers are told of it") was broken: no handler of any term or
// member was ever told the object is gone. Wait now carries the keys a
// pass is still telling too.
func TestAdv8DeletionBeingToldPastTheStopGraceReachesTheNextTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{stopGrace: 200 * time.Millisecond})
	key := a.createHandled(t, ns, "dropped")

	held, release := a.holdAbsentPasses(key)
	defer release()
	deleteCM(t, ns, "dropped")
	waitHeld(t, held, "a over the deleted object")
	a.leaseProx.Cut()
	a.termEnded(t)
	// The first term's factory stopped waiting for the held pass (its
	// stop grace passed) and Join ran the next term, while the pass of
	// the first term still tells the deletion.
	a.nextTerm(t)
	release() // the first term's pass goes on, with its ended context
	eventually(t, "the first term's held pass over the deleted object ending", func() bool {
		for _, p := range a.passesFor(key) {
			if !p.cached {
				return true
			}
		}
		return false
	})
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	a.createHandled(t, ns, "next")
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
}
