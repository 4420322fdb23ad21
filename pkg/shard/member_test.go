package shard_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestMemberCachesOnlyItsShare: a member's informer of a sharded kind holds
// the objects assigned to it, listed and watched, and none assigned to
// another member or to nobody; its handlers and gate never see those. Its
// member Lease is named and labelled for the sharder to find.
func TestMemberCachesOnlyItsShare(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	var idA string
	idB := shard.MemberID("b")
	a := startMember(t, ns, "a", memberOpts{beforeStart: func(id string) {
		idA = id
		createCM(t, ns, "a-1", idA)
		createCM(t, ns, "a-2", idA)
		createCM(t, ns, "b-1", idB)
		createCM(t, ns, "none", "")
	}})
	if a.id() != idA {
		t.Fatalf("member a's factory runs under ID %q, not its term's %q", a.id(), idA)
	}
	createCM(t, ns, "a-3", idA)
	createCM(t, ns, "b-2", idB)
	mine := []string{ns + "/a-1", ns + "/a-2", ns + "/a-3"}
	for _, key := range mine {
		eventually(t, "a handling "+key, func() bool { return len(a.callsFor(key)) > 0 })
	}
	// b-2 was created after a-3: had a watched it, it would be cached by now.
	keys := a.t().informer.GetStore().ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, mine) {
		t.Fatalf("member a caches %v, want only its share %v", keys, mine)
	}
	for _, name := range []string{"b-1", "b-2", "none"} {
		if n, p := len(a.callsFor(ns+"/"+name)), len(a.passesFor(ns+"/"+name)); n+p > 0 {
			t.Errorf("%s, not a's, reached a's gate %d times and handlers %d times", name, p, n)
		}
	}

	lease, err := controlplanetest.Clientset(cp().Config()).CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ringName, idA), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("member a's Lease: %v", err)
	}
	if lease.Labels[shard.RingLabel] != ringName || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != a.t().m.Identity() ||
		!strings.HasPrefix(*lease.Spec.HolderIdentity, "a_") || shard.MemberID(*lease.Spec.HolderIdentity) != idA {
		t.Fatalf("member a's Lease has labels %v and holder %v, want %s=%s and a_<term suffix> whose MemberID is %s",
			lease.Labels, lease.Spec.HolderIdentity, shard.RingLabel, ringName, idA)
	}
}

// TestDrainIsAcknowledgedWithoutHandlerCalls: when the sharder marks a
// member's object draining, the member removes both labels, and no handler
// of it runs for the object from then on: not on the drain, not when its
// cache lets go of the object (which looks like a deletion), not when the
// key is queued again, not after the object is assigned to another member.
func TestDrainIsAcknowledgedWithoutHandlerCalls(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	// One worker: a marker queued after the key says its pass is over (the
	// pass of a key a member no longer holds reaches no gate).
	a := startMember(t, ns, "a", memberOpts{workers: 1})
	key := ns + "/moving"
	createCM(t, ns, "moving", a.id())
	createCM(t, ns, "mark", a.id())
	eventually(t, "a handling the objects", func() bool { return len(a.callsFor(key)) > 0 && len(a.callsFor(ns+"/mark")) > 0 })
	before := len(a.callsFor(key))

	label(t, ns, "moving", a.id(), true)
	eventually(t, "the drain acknowledged (both labels removed)", func() bool {
		cm, err := cms(ns).Get(t.Context(), "moving", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, assigned := cm.Labels[shard.AssignmentLabel(ringName)]
		_, draining := cm.Labels[shard.DrainLabel(ringName)]
		return !assigned && !draining
	})
	eventually(t, "a's cache letting go of the object", func() bool { return !a.cached(key) })
	a.enqueuePassed(t, ns, "moving", "mark") // after the acknowledgement
	label(t, ns, "moving", shard.MemberID("b"), false)
	a.enqueuePassed(t, ns, "moving", "mark") // after the assignment to b
	if calls := a.callsFor(key); len(calls) != before {
		var deleted []bool
		for _, c := range calls[before:] {
			deleted = append(deleted, c.deleted)
		}
		t.Fatalf("a's handlers ran %d times for the object after it was drained (given as deleted: %v); want none",
			len(calls)-before, deleted)
	}
	passes := a.passesFor(key)
	for _, p := range passes {
		// While the object is unassigned, a keeps the key (a quiet
		// retry) so that a deletion before the reassignment reaches it.
		if p.err != nil && !errors.Is(p.err, shard.ErrHandedOverUnassigned) {
			t.Errorf("a gate pass failed: %v", p.err)
		}
	}
	if last := passes[len(passes)-1]; last.cached || last.handle || last.err != nil {
		t.Errorf("a's last gate pass over %s, after its assignment to b: cached %v, handle %v, error %v; want the absence refused (the key let go)", key, last.cached, last.handle, last.err)
	}
}

// TestReassignedObjectIsNotHandedAsDeleted: the sharder assigns a member's
// object to another member directly (the first member's lease had
// expired). The member's cache drops it as if it were deleted; its gate
// reads it from the API server and does not hand it to the handlers as
// deleted. A real deletion is handed to them, as nil.
func TestReassignedObjectIsNotHandedAsDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	moved, deleted := ns+"/moved", ns+"/deleted"
	createCM(t, ns, "moved", a.id())
	createCM(t, ns, "deleted", a.id())
	eventually(t, "a handling both objects", func() bool { return len(a.callsFor(moved)) > 0 && len(a.callsFor(deleted)) > 0 })

	label(t, ns, "moved", shard.MemberID("b"), false)
	if err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a handling the deletion as nil", func() bool { return a.sawDeleted(deleted) })
	eventually(t, "a gate pass for the moved object after a's cache dropped it", func() bool {
		if a.cached(moved) {
			return false
		}
		for _, p := range a.passesFor(moved) {
			if !p.cached && p.err == nil {
				return true
			}
		}
		return false
	})
	if a.sawDeleted(moved) {
		t.Fatal("a's handlers were given the object moved to b as deleted")
	}
}

// TestDataCutMoveIsNotReadAsDeleted: a member's data connection is cut
// (its Lease's stays up, so its term goes on) while one of its objects is
// moved to another member. When it is back, its informer learns that the
// object left its share (a watch DELETE, or, after a relist, a
// DeletedFinalStateUnknown with the stale object assigned to it); the gate
// reads the object and does not hand it to the handlers as deleted.
//
// Before members had one term each, the relist came from the same factory
// starting again after a lost membership; a new term now builds a new
// factory with an empty cache, so that stale state no longer exists.
func TestDataCutMoveIsNotReadAsDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := ns + "/moved"
	createCM(t, ns, "moved", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	a.dataProx.Cut()
	label(t, ns, "moved", shard.MemberID("b"), false)
	// Past a lease duration: the member's term goes on meanwhile.
	time.Sleep(leaseDuration)
	a.dataProx.Restore()
	eventually(t, "a gate pass for the object after a's cache dropped it", func() bool {
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
	a.mu.Lock()
	tombs := a.tombstones[key]
	a.mu.Unlock()
	t.Logf("DeletedFinalStateUnknown for the moved object: %d", tombs)
	if a.sawDeleted(key) {
		t.Fatal("a's handlers were given the object moved to b while a was cut off as deleted")
	}
	if n := a.terms.Load(); n != 1 || !a.running.Load() {
		t.Fatalf("a ran %d terms and runs now: %v; want its first term still running (only its data connection was cut)", n, a.running.Load())
	}
}

// TestAcknowledgementKeepsANewerAssignment: a member's acknowledgement of
// a drain is conditional on the version it decided on. The sharder marks
// the object draining, and while the member's worker holds that version it
// assigns the object to b directly; the member's acknowledgement then
// fails on the resourceVersion, the member reads the object again, sees it
// is b's, and leaves b's assignment in place.
func TestAcknowledgementKeepsANewerAssignment(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	key := ns + "/contested"
	createCM(t, ns, "contested", a.id())
	eventually(t, "a handling the object", func() bool { return len(a.callsFor(key)) > 0 })

	held, release := a.holdPasses(key)
	drained := label(t, ns, "contested", a.id(), true)
	select {
	case <-held:
	case <-time.After(timeout):
		t.Fatal("no gate pass for the draining object")
	}
	label(t, ns, "contested", shard.MemberID("b"), false)
	n := len(a.passesFor(key))
	release()
	eventually(t, "a's gate deciding on the draining version", func() bool { return len(a.passesFor(key)) > n })
	p := a.passesFor(key)[n]
	if !p.cached || p.handle || p.err != nil {
		t.Fatalf("the held pass: cached %v, handle %v, error %v; want a cached object, skipped, no error", p.cached, p.handle, p.err)
	}
	cm, err := cms(ns).Get(t.Context(), "contested", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Labels[shard.AssignmentLabel(ringName)]; got != shard.MemberID("b") {
		t.Fatalf("after a acknowledged the drain of version %s, the object is assigned to %q, want b's %q (labels %v)",
			drained.ResourceVersion, got, shard.MemberID("b"), cm.Labels)
	}
}

// TestCutOffMemberStopsWritingBeforeItsLeaseExpires: a member cut off from
// its Lease while its handlers keep getting work (its data connection
// stays up), and while one handler is still busy and writes after the
// member stopped, issues its last write before its Lease could expire, so
// the sharder, which reassigns a dead member's objects directly once its
// Lease expired, never lets two members write one object. The pattern is
// pkg/leader's TestCutOffLeaderStopsAndLeadsAgain, for a member.
func TestCutOffMemberStopsWritingBeforeItsLeaseExpires(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{mark: true})
	createCM(t, ns, "first", a.id())
	eventually(t, "a writing", func() bool { return !a.writes.Last().IsZero() })
	createCM(t, ns, "slow", a.id())

	a.leaseProx.Cut()
	stop := make(chan struct{})
	streamed := make(chan int)
	go func() {
		i := 0
		defer func() { streamed <- i }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			cm := fmt.Sprintf("work-%d", i)
			createCM(t, ns, cm, a.id())
			i++
		}
	}()
	eventually(t, "a stopping without its lease", func() bool { return !a.running.Load() })
	time.Sleep(leaseDuration)
	close(stop)
	eventually(t, "the slow handler's write", func() bool { return a.slowDone.Load() > 0 })
	t.Logf("%d objects created for a while it was cut off", <-streamed)

	renewed, lastWrite := a.renews.Last(), a.writes.Last()
	if renewed.IsZero() || lastWrite.IsZero() {
		t.Fatalf("missing records: last renewal %v, last write %v", renewed, lastWrite)
	}
	if !lastWrite.Before(renewed.Add(leaseDuration)) {
		t.Fatalf("a wrote %v after its last renewal, not within the lease duration %v", lastWrite.Sub(renewed), leaseDuration)
	}
	t.Logf("a: last write %v after its last renewal (renew deadline %v, lease duration %v)", lastWrite.Sub(renewed), renewDeadline, leaseDuration)
}
