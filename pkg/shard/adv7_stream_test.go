package shard_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv7StreamingMemberHandlesOnlyItsShare: a member whose informers
// stream their first list (workers start before the sync, reading what
// was streamed) is given objects assigned to it, to another member and to
// nobody before it starts; as soon as its term runs, one of its objects
// moves to another member and another is deleted. It handles each of its
// objects, never one of the others', is told that the deleted one is gone
// (once), and is never told that the moved one is. (Tried in the seventh
// round; it holds.)
func TestAdv7StreamingMemberHandlesOnlyItsShare(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	const n = 40
	a := startMember(t, ns, "a", memberOpts{stream: true, beforeStart: func(id string) {
		for i := range n {
			createCM(t, ns, fmt.Sprintf("mine-%d", i), id)
			createCM(t, ns, fmt.Sprintf("other-%d", i), shard.MemberID("b"))
		}
		createCM(t, ns, "nobodys", "")
	}})
	label(t, ns, "mine-1", shard.MemberID("b"), false)
	admin := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	if err := admin.Delete(t.Context(), "mine-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a handling each of its objects and told mine-2 is gone", func() bool {
		for i := range n {
			if i != 1 && len(a.callsFor(fmt.Sprintf("%s/mine-%d", ns, i))) == 0 {
				return false
			}
		}
		return a.sawDeleted(ns + "/mine-2")
	})
	createCM(t, ns, "after", a.id())
	eventually(t, "a handling an object created last", func() bool { return len(a.callsFor(ns+"/after")) > 0 })
	for i := range n {
		if calls := a.callsFor(fmt.Sprintf("%s/other-%d", ns, i)); len(calls) > 0 {
			t.Errorf("a handled other-%d, assigned to b: %+v", i, calls)
		}
	}
	if calls := a.callsFor(ns + "/nobodys"); len(calls) > 0 {
		t.Errorf("a handled an object assigned to nobody: %+v", calls)
	}
	if a.sawDeleted(ns + "/mine-1") {
		t.Errorf("a was told mine-1, moved to b, is gone: %+v", a.callsFor(ns+"/mine-1"))
	}
	deleted := 0
	for _, c := range a.callsFor(ns + "/mine-2") {
		if c.deleted {
			deleted++
		}
	}
	if deleted != 1 {
		t.Errorf("a was told %d times that mine-2 is gone, want once: %+v", deleted, a.callsFor(ns+"/mine-2"))
	}
}
