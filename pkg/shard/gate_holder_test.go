package shard_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestDeletionReachesOnlyTheHolder (issue 24, case 3): a key can be queued
// on a member that does not hold its object (relatedresource from a kind
// outside the ring does it; Enqueue here). Once the object is deleted, the
// gate's read of it finds NotFound on every member; only the member that
// held it (its cache had it, or it was assigned to it when it went) may
// run its handlers for the deletion. Both cases of "not held" are tried:
// an object that was never the member's, and one it handed over to
// another member before it was deleted.
func TestDeletionReachesOnlyTheHolder(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	// One worker each: a marker key queued after a key is handled after
	// it, so the marker's handler call says the key's pass is over.
	a := startMember(t, ns, "a", memberOpts{workers: 1})
	b := startMember(t, ns, "b", memberOpts{workers: 1})
	createCM(t, ns, "mark-a", a.id())
	createCM(t, ns, "mark-b", b.id())
	createCM(t, ns, "never-b", a.id())
	createCM(t, ns, "handed", a.id())
	never, handed := ns+"/never-b", ns+"/handed"
	eventually(t, "a handles its objects", func() bool {
		return len(a.callsFor(never)) > 0 && len(a.callsFor(handed)) > 0 && len(a.callsFor(ns+"/mark-a")) > 0
	})
	eventually(t, "b handles its marker", func() bool { return len(b.callsFor(ns+"/mark-b")) > 0 })

	// "handed" moves from a to b as the sharder moves it: drained, let go
	// by a, assigned to b.
	label(t, ns, "handed", a.id(), true)
	eventually(t, "a lets go of the drained object", func() bool {
		cm, err := cms(ns).Get(t.Context(), "handed", metav1.GetOptions{})
		return err == nil && cm.Labels == nil || err == nil && len(cm.Labels) == 0
	})
	eventually(t, "a's cache drops the object it let go", func() bool { return !a.cached(handed) })
	label(t, ns, "handed", b.id(), false)
	eventually(t, "b handles the object handed to it", func() bool {
		for _, c := range b.callsFor(handed) {
			if !c.deleted {
				return true
			}
		}
		return false
	})

	kube := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	for _, name := range []string{"never-b", "handed"} {
		if err := kube.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the holders handle the deletions", func() bool { return a.sawDeleted(never) && b.sawDeleted(handed) })

	// Queue each deleted key on the member that did not hold it.
	b.enqueuePassed(t, ns, "never-b", "mark-b")
	a.enqueuePassed(t, ns, "handed", "mark-a")
	if b.sawDeleted(never) {
		t.Errorf("member b ran its handlers for the deletion of %s, which was never assigned to it (gate passes: %+v)", never, b.passesFor(never))
	}
	for _, c := range a.callsFor(handed) {
		if c.deleted {
			t.Errorf("member a ran its handlers for the deletion of %s, which it had handed to b before it was deleted (gate passes: %+v)", handed, a.passesFor(handed))
			break
		}
	}
}

// enqueuePassed queues name on the member, then marker (an object the
// member holds), and waits until the member's handlers have been called for
// marker: with one worker (memberOpts.workers), name's pass is over then,
// whether or not it reached the gate or the handlers.
func (r *member) enqueuePassed(t *testing.T, ns, name, marker string) {
	t.Helper()
	before := len(r.callsFor(ns + "/" + marker))
	r.t().cms.Enqueue(ns, name)
	r.t().cms.Enqueue(ns, marker)
	eventually(t, r.name+" handling "+marker+" after "+name, func() bool { return len(r.callsFor(ns+"/"+marker)) > before })
}
