package shard_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv8DeletionDuringAPartitionThatEndsTheTermReachesTheNextTerm: one
// network partition cuts a member off the API server, its Lease and its
// data connections alike (they are one network). Its term ends (the Lease
// cannot be renewed). While it is cut off, an object it held is deleted:
// its term's informer never sees the delete, so nothing is recorded for
// CarriedDeletions (it carries only deletions the ended term's informer
// delivered with their final state). The partition heals and Join runs the
// next term, whose factory starts from an empty set of held keys and whose
// list lacks the object. No other member held it, and the sharder has
// nothing to move: before, the deletion of an object a's handlers were
// given reached no handler, ever. Now the ended term hands over every key
// it held, and the next term's gate reads the object's history after the
// version the ended term's cache last had: deleted while a's, it is told. docs/replicas.md: "A deletion reaches only the
// member that held the object ... the one it was assigned to when it went
// does", and under leader election the restarted factory keeps the keys
// its handlers may not have seen the end of.
func TestAdv8DeletionDuringAPartitionThatEndsTheTermReachesTheNextTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := a.createHandled(t, ns, "partitioned")

	a.dataProx.Cut()
	a.leaseProx.Cut()
	deleteCM(t, ns, "partitioned")
	a.termEnded(t)
	a.dataProx.Restore()
	a.nextTerm(t)
	a.createHandled(t, ns, "next")
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	eventually(t, "a's handlers told that the object it held is gone", func() bool { return a.sawDeleted(key) })
}
