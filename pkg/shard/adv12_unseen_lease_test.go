package shard

import (
	"errors"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv12LeaseHolderEditedByHandThenANewSharderMovesObjectsFromALiveMember:
// a member Lease whose holderIdentity is edited by hand, then a new
// sharder (failover, rolling upgrade): the new one never saw a copy naming
// the member, so it cannot judge the member from it (sharder_liveness.go);
// it must keep the member's objects for Ring.MaxMemberLeaseDuration after
// it first saw the Lease, not end the term and move them at once while the
// member's term, fence and a handler still run.
func TestAdv12LeaseHolderEditedByHandThenANewSharderMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "holder someone-else, then the sharder replaced", true, adv10Edit(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("someone-else") }))
}

// TestAdv12MemberWhoseLeaseIsDeletedStopsBeforeItsObjectsMove: the member
// side of a Lease deleted by hand. The member (its Lease client not cut
// off, so it could create the Lease again) must not: its renewals fail,
// its term ends, its handler's context ends and its fence closes; a
// sharder elected after the deletion then moves the member's object to
// another member, whose handler begins only after the first member's
// ended. The move happens (the object is not stuck on a dead ID), a ring
// maximum lease duration after the new sharder found the Lease missing.
func TestAdv12MemberWhoseLeaseIsDeletedStopsBeforeItsObjectsMove(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advunseen", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}},
		MaxMemberLeaseDuration: 10 * time.Second}
	timings := []leader.Option{leader.WithLeaseDuration(10 * time.Second), leader.WithRenewDeadline(8 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, true)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	runSharder := func(identity string) func() { return advRunStoppableSharder(t, ring, identity) }
	stopFirst := runSharder("sharder")
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(spans.release) }) })

	ctx := t.Context()
	x := advHoldOneOnA(t, kube, ring, a, b, spans)

	leaseName := MemberLeaseName(ring.Name, a.ID())
	if err := kube.CoordinationV1().Leases(ns).Delete(ctx, leaseName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stopFirst()
	runSharder("sharder-next")

	// The handler is never released by the test: only the end of A's
	// term ends it.
	controlplanetest.Eventually(t, 2*time.Minute, "A's handler for X ends with its term", func() bool {
		_, aRuns := spans.find("a", x, true)
		return !aRuns
	})
	if a.Holding() {
		t.Errorf("member A still holds its deleted Lease after its term ended")
	}
	_, err := kube.CoordinationV1().Leases(ns).Get(ctx, leaseName, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("member A's Lease, deleted by hand, is back (err %v): its member created it again within its term", err)
	}
	_, err = controlplanetest.Clientset(a.Fence(cfg)).CoreV1().ConfigMaps(ns).Patch(ctx, x, "application/merge-patch+json", []byte(`{"data":{"a":"late"}}`), metav1.PatchOptions{})
	var notLeader *leader.NotLeaderError
	if !errors.As(err, &notLeader) {
		t.Errorf("member A's fenced write after its Lease was deleted and its term ended: %v, want a *leader.NotLeaderError", err)
	}

	controlplanetest.Eventually(t, 2*time.Minute, "the new sharder moves X to B and B handles it", func() bool {
		_, ok := spans.find("b", x, false)
		return ok
	})
	bRun, _ := spans.find("b", x, false)
	spans.mu.Lock()
	for _, sp := range spans.spans {
		if sp.member == "a" && sp.name == x && (sp.end == 0 || sp.end > bRun.start) {
			t.Errorf("member B's handler for ConfigMap %s began (run %+v) before member A's ended (run %+v)", x, bRun, *sp)
		}
	}
	spans.mu.Unlock()
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Labels[AssignmentLabel(ring.Name)]; got != b.ID() {
		t.Errorf("ConfigMap %s is assigned to %q, want member B %s", x, got, b.ID())
	}
}
