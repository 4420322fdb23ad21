package shard_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv8DeletionBetweenAcknowledgementAndReassignmentReachesAHandler:
// member a holds an object; the sharder drains it, a acknowledges (its
// gate removes both labels: the object is unassigned) and, before the
// sharder assigns it again (the sharder is between leaders, or simply
// slower than the user), the object is deleted. a's hold ends with its
// acknowledgement (handedKeys, 69f2f08): the pass over the absence its
// cache reads next is refused and the key forgotten. No other member ever
// held the object, and the sharder has nothing left to assign.
// docs/replicas.md: "A deletion reaches only the member that held the
// object ... the one it was assigned to when it went does": it was
// assigned to none, so before, the deletion of an object a's handlers were
// given (a cleanup of an external resource) reached no handler of any
// member, ever. Now a keeps the key while the object reads unassigned,
// and, once it is gone, its history after the acknowledgement shows no
// member was assigned it: a's handlers are told.
func TestAdv8DeletionBetweenAcknowledgementAndReassignmentReachesAHandler(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	b := startMember(t, ns, "b", memberOpts{})
	key := ns + "/between"
	createCM(t, ns, "between", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	label(t, ns, "between", a.id(), true) // the sharder drains it
	eventually(t, "a acknowledging the drain (the object unassigned)", func() bool {
		cm, err := cms(ns).Get(t.Context(), "between", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, assigned := cm.Labels[shard.AssignmentLabel(ringName)]
		return !assigned
	})
	eventually(t, "a's gate deciding the pass over the absence its cache read", func() bool {
		for _, p := range a.passesFor(key) {
			if !p.cached {
				return true
			}
		}
		return false
	})
	// The object is deleted before the sharder assigns it to anyone.
	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "between", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range a.passesFor(key) {
		t.Logf("a's gate pass over %s: cached %v, handle %v, error %v", key, p.cached, p.handle, p.err)
	}
	eventually(t, "a handler of the ring told that the object a held is gone", func() bool {
		return a.sawDeleted(key) || b.sawDeleted(key)
	})
}
