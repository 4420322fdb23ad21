package shard

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv13LeaseDurationEditedDownThenANewSharderMovesObjectsFromALiveMember:
// member A is cut off from the API server (its renewals fail; its term,
// fence and handler run until its renew deadline, 35 s after its last
// renewal), and its Lease's leaseDurationSeconds is edited down by hand to
// 1 s, holder kept (or the Lease is restored from a backup with a shorter
// duration). The sharder that saw A's copies keeps the longest duration A
// wrote; a sharder elected after the edit (failover, rolling upgrade)
// sees only the edited copy, naming A, and judges A from it: expired, so
// it ends the term and moves A's object to B while A's handler still
// runs. Ring.MaxMemberLeaseDuration, the bound a new sharder uses for a
// Lease it never saw naming its member, is not applied to a first copy
// that names the member with a shorter duration. Fixed: the lease duration
// marked in the member's ID (MemberID) bounds every copy's from below.
func TestAdv13LeaseDurationEditedDownThenANewSharderMovesObjectsFromALiveMember(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advdurdown", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}},
		MaxMemberLeaseDuration: 40 * time.Second}
	timings := []leader.Option{leader.WithLeaseDuration(40 * time.Second), leader.WithRenewDeadline(35 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	a := advMember(t, ring, "a", controlplanetest.Clientset(proxied).CoordinationV1(), spans, timings, true)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	runSharder := func(identity string) func() { return advRunStoppableSharder(t, ring, identity) }
	stopFirst := runSharder("sharder")
	t.Cleanup(func() { close(spans.release) })

	x := advHoldOneOnA(t, kube, ring, a, b, spans)

	proxy.Cut() // A's Lease client: its renewals fail from now on
	leases := kube.CoordinationV1().Leases(ns)
	adv10Edit(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](1) })(t, leases, MemberLeaseName(ring.Name, a.ID()))
	stopFirst()
	runSharder("sharder-next")

	// A's handler is never released by the test: only the end of A's term
	// (35 s after its last renewal) ends it. Wait for that, or for B to
	// handle X first (the defect).
	controlplanetest.Eventually(t, 2*time.Minute, "B handles X, or A's handler for X ends", func() bool {
		_, bRan := spans.find("b", x, false)
		_, aRuns := spans.find("a", x, true)
		return bRan || !aRuns
	})
	aRun, aRuns := spans.find("a", x, true)
	if bRun, bRan := spans.find("b", x, false); bRan && aRuns {
		t.Errorf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v; A holding: %v): the new sharder judged A from a Lease copy whose leaseDurationSeconds was edited down to 1 s",
			x, bRun, aRun, a.Holding())
	}
}
