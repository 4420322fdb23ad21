package shard_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv7HandedOverObjectsDeletionRunsOnlyOnItsNewMember: member a holds
// an object, the sharder drains it and a acknowledges (its gate removes
// the labels), the sharder assigns it to b, and the object is deleted
// while b holds it. docs/replicas.md: "the member that never had the
// object, or handed it over before it went, runs nothing for its deletion;
// the one it was assigned to when it went does." The acknowledgement takes
// the object out of a's cache (a relabel looks like a deletion to an
// informer), and a's pass over that absence is only queued; a's workers
// are busy (the pass is held here until the object went). The pass finds
// the key still among those a held (a pass that acknowledged a drain does
// not forget it), reads the name from the API server, gets NotFound, and
// runs a's handlers for the deletion of an object a handed over: a and b
// both run their deletion handlers (two finalizer cleanups, two external
// side effects).
func TestAdv7HandedOverObjectsDeletionRunsOnlyOnItsNewMember(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := ns + "/handed"
	createCM(t, ns, "handed", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	held, release := a.holdAbsentPasses(key)
	defer release()
	label(t, ns, "handed", a.id(), true) // the sharder drains it
	select {
	case <-held:
	case <-time.After(timeout):
		t.Fatal("no pass of a over the object's absence after it acknowledged the drain")
	}
	cm, err := cms(ns).Get(t.Context(), "handed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cm.Labels[shard.AssignmentLabel(ringName)]; ok {
		t.Fatalf("a's cache dropped the object, which is still assigned to %q", got)
	}
	label(t, ns, "handed", shard.MemberID("b"), false) // the sharder assigns it to b
	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "handed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n := len(a.passesFor(key))
	release()
	eventually(t, "a's gate deciding the held pass", func() bool { return len(a.passesFor(key)) > n })
	if a.sawDeleted(key) {
		t.Fatalf("a acknowledged the drain of %s, the object was then assigned to b and deleted; a's handlers were given its deletion "+
			"(gate passes %+v): a member that handed the object over ran its handlers for its deletion; only b, which held it when it went, may", key, a.passesFor(key))
	}
}
