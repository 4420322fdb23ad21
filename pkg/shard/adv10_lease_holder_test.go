package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv10LeaseHolderEditedByHandMovesObjectsFromALiveMember: a member
// Lease whose holderIdentity is edited by hand (kubectl edit, a script
// that "frees" a Lease) to another identity is read by the sharder at
// once as a member that may no longer write (holder() is false, so
// mayWrite is zero), and the member's objects are assigned to another
// member directly, while the member's term, fence and a handler still run
// until its renew deadline (50 s here). Unlike a deleted Lease (judged
// from the last copy that named the member), nothing waits.
func TestAdv10LeaseHolderEditedByHandMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "holder someone-else", false, adv10Edit(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("someone-else") }))
}

// TestAdv10LeaseHolderClearedByHandMovesObjectsFromALiveMember is the same
// with the holder cleared by hand (as a release looks), the member still
// running.
func TestAdv10LeaseHolderClearedByHandMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "holder cleared", false, adv10Edit(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("") }))
}

// TestAdv10LeaseTermEndedByHandMovesObjectsFromALiveMember is the same
// with the term-ended label put on the Lease by hand (copied from another
// Lease, or a script that "ends" members): the sharder takes the member
// for dead at once while it still runs.
func TestAdv10LeaseTermEndedByHandMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "labelled "+leader.TermEndedLabel, false, adv10Edit(func(l *coordinationv1.Lease) {
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		l.Labels[leader.TermEndedLabel] = "by-hand"
	}))
}

// TestAdv10DeletedMemberLeaseThenANewSharderMovesObjectsFromALiveMember:
// a member Lease deleted by hand is judged from the last copy the
// sharder's watch had, but only by that sharder: the next one (a
// failover, a rolling upgrade of the replicas the sharder runs in) never
// saw the Lease, reads the member as dead and moves its objects directly
// while the member's term, fence and a handler still run (renew deadline
// 50 s here).
func TestAdv10DeletedMemberLeaseThenANewSharderMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "deleted, then the sharder replaced", true, func(t *testing.T, leases coordinationv1client.LeaseInterface, name string) {
		if err := leases.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// adv10Edit is an act of adv10LeaseActedOn that updates the Lease by hand
// with change.
func adv10Edit(change func(*coordinationv1.Lease)) func(*testing.T, coordinationv1client.LeaseInterface, string) {
	return func(t *testing.T, leases coordinationv1client.LeaseInterface, name string) {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l, err := leases.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(l)
			_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// adv10LeaseActedOn runs members A and B and a sharder; once A's handler
// for one of its objects, X, runs (held), it acts on A's Lease by hand
// (act), then, with newSharder, replaces the sharder by another, and
// fails if B's handler for X begins while A's still runs.
func adv10LeaseActedOn(t *testing.T, edit string, newSharder bool, act func(*testing.T, coordinationv1client.LeaseInterface, string)) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advholder", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, true)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	runSharder := func(identity string) func() { return advRunStoppableSharder(t, ring, identity) }
	stopFirst := runSharder("sharder")
	var releaseOnce sync.Once
	releaseA := func() { releaseOnce.Do(func() { close(spans.release) }) }
	t.Cleanup(releaseA)

	ctx := t.Context()
	x := advHoldOneOnA(t, kube, ring, a, b, spans)

	act(t, kube.CoordinationV1().Leases(ns), MemberLeaseName(ring.Name, a.ID()))
	if newSharder {
		stopFirst()
		runSharder("sharder-next")
	}
	// Two minutes are past the last copy's renewTime + leaseDuration (60 s)
	// + the skew allowance: a member A that still runs then (it took its
	// Lease back, or renews it under a label put on by hand) keeps X, and
	// neither event comes, which is safe.
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		_, bRan := spans.find("b", x, false)
		_, aRuns := spans.find("a", x, true)
		return bRan || !aRuns, nil
	})
	aRun, aRuns := spans.find("a", x, true)
	bRun, bRan := spans.find("b", x, false)
	holding := a.Holding()
	releaseA()
	if bRan && aRuns {
		cm, _ := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): A's Lease was edited by hand (%s) while A's term and fence were live (A holding: %v); the object now names member %q (B is %s)",
			x, bRun, aRun, edit, holding, cm.Labels[AssignmentLabel(ring.Name)], b.ID())
	}
}
