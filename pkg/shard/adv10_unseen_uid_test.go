package shard_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv10DeletionOfAnUnseenObjectIsToldWhetherOrNotItsNameIsTaken: an
// object assigned to member A, in A's cache, is deleted before any pass
// gave it to A's handlers (the key's uid is ""), and its name is taken
// again by an object assigned to another member. The object went while
// A's: "the one it was assigned to when it went" runs for its deletion
// (docs/replicas.md), as it does when the name is not taken again. The
// gate compares the UID the cache had (controller.AbsentUID); before,
// with no UID the handlers were given, it took the new object for the one
// held, found it assigned elsewhere, and refused: no member was told.
func TestAdv10DeletionOfAnUnseenObjectIsToldWhetherOrNotItsNameIsTaken(t *testing.T) {
	for _, again := range []bool{false, true} {
		name := map[bool]string{false: "gone", true: "taken-again"}[again]
		t.Run(name, func(t *testing.T) {
			ns := controlplanetest.Namespace(t, cp().Config())
			a := startMember(t, ns, "a", memberOpts{workers: 1})
			kube := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
			// The one worker is busy with another key.
			held, release := a.holdPasses(ns + "/blocker")
			defer release()
			createCM(t, ns, "blocker", a.id())
			<-held
			createCM(t, ns, "x", a.id())
			eventually(t, "x in A's cache", func() bool { return a.cached(ns + "/x") })
			if err := kube.Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if again {
				createCM(t, ns, "x", "another-member")
			}
			eventually(t, "x out of A's cache", func() bool { return !a.cached(ns + "/x") })
			release()
			eventually(t, "a pass of A over x's absence", func() bool {
				for _, p := range a.passesFor(ns + "/x") {
					if !p.cached && p.err == nil {
						return true
					}
				}
				return false
			})
			if !a.sawDeleted(ns + "/x") {
				t.Fatalf("x went while assigned to member A and in its cache, and A's handlers were not told (passes %+v, calls %+v)",
					a.passesFor(ns+"/x"), a.callsFor(ns+"/x"))
			}
		})
	}
}
