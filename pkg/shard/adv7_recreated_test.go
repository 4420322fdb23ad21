package shard_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv7DeletionOfAHeldObjectRecreatedElsewhereReachesItsMember: an
// object assigned to member a, and handled by a, is deleted, and a new
// object is created under the same name and assigned to b (the sharder
// assigns new objects to any live member) before a's watch delivers the
// deletion (a's data connection stalls for that moment). docs/replicas.md:
// "A deletion reaches only the member that held the object ... the one it
// was assigned to when it went does." a's gate reads the name from the API
// server, finds the new object (another UID, b's), reads it as "moved
// away" and forgets the key: the deletion of the object a held reaches no
// handler at all (b never held it; b is given the new object).
func TestAdv7DeletionOfAHeldObjectRecreatedElsewhereReachesItsMember(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := ns + "/reborn"
	createCM(t, ns, "reborn", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })
	old, err := cms(ns).Get(t.Context(), "reborn", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// a's watch is held back while the object goes and a new one of that
	// name comes, assigned to b.
	a.dataProx.Stall()
	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "reborn", metav1.DeleteOptions{}); err != nil {
		a.dataProx.Resume()
		t.Fatal(err)
	}
	createCM(t, ns, "reborn", shard.MemberID("b"))
	a.dataProx.Resume()

	eventually(t, "a's cache dropping the deleted object and a's gate deciding on its absence", func() bool {
		if a.cached(key) {
			return false
		}
		for _, p := range a.passesFor(key) {
			if !p.cached && p.err == nil {
				return true
			}
		}
		return false
	})
	now, err := cms(ns).Get(t.Context(), "reborn", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.sawDeleted(key) {
		t.Fatalf("object %s (UID %s), assigned to a and handled by a, was deleted; a's handlers were never told (calls %+v, gate passes %+v); "+
			"a's gate read the new object of that name (UID %s, assigned to %s) as the old one moved away, and b never held the old one",
			key, old.UID, a.callsFor(key), a.passesFor(key), now.UID, now.Labels[shard.AssignmentLabel(ringName)])
	}
}
