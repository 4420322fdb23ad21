package shard

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv13SharderWithASmallerMaxMemberLeaseMovesObjectsFromALiveMember:
// Ring.MaxMemberLeaseDuration differs between the sharder's Ring and the
// members' (a rolling upgrade that raises it, with the members' lease
// durations: during the rollout an old sharder, or a new one whose config
// was not changed, runs beside members of the new config). NewMember
// checks a member's lease duration only against its own Ring, and nothing
// compares the sharder's maximum with the members': so a sharder elected
// after a member's Lease was deleted waits its own, shorter, maximum and
// moves the member's objects while the member's term, fence and handler
// still run (two members handling one object at once, the defect
// TestAdv10DeletedMemberLeaseThenANewSharderMovesObjectsFromALiveMember
// proved for a sharder that did not wait at all). Fixed: NewMember marks
// the member's lease duration in its identity and so in its ID (MemberID),
// and the sharder waits the longer of its Ring's maximum and the duration
// the ID marks.
func TestAdv13SharderWithASmallerMaxMemberLeaseMovesObjectsFromALiveMember(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	kinds := []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}
	// The members' Ring allows 40 s leases; the sharder's keeps 2 s.
	memberRing := Ring{Name: "advmaxmis", Namespace: ns, Kinds: kinds, MaxMemberLeaseDuration: 40 * time.Second}
	sharderRing := memberRing
	sharderRing.MaxMemberLeaseDuration = 2 * time.Second
	timings := []leader.Option{leader.WithLeaseDuration(40 * time.Second), leader.WithRenewDeadline(35 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, memberRing, "a", kube.CoordinationV1(), spans, timings, true)
	b := advMember(t, memberRing, "b", kube.CoordinationV1(), spans, timings, false)
	runSharder := func(identity string) func() { return advRunStoppableSharder(t, sharderRing, identity) }
	stopFirst := runSharder("sharder")
	t.Cleanup(func() { close(spans.release) })

	ctx := t.Context()
	x := advHoldOneOnA(t, kube, memberRing, a, b, spans)

	if err := kube.CoordinationV1().Leases(ns).Delete(ctx, MemberLeaseName(memberRing.Name, a.ID()), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stopFirst()
	runSharder("sharder-next")

	// A's handler is never released by the test: only the end of A's term
	// (its renew deadline after its last renewal, some 35 s) ends it.
	controlplanetest.Eventually(t, 2*time.Minute, "the new sharder moves X to B and B handles it", func() bool {
		_, ok := spans.find("b", x, false)
		return ok
	})
	bRun, _ := spans.find("b", x, false)
	spans.mu.Lock()
	defer spans.mu.Unlock()
	for _, sp := range spans.spans {
		if sp.member == "a" && sp.name == x && (sp.end == 0 || sp.end > bRun.start) {
			t.Errorf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v; A holding: %v): the sharder waited its Ring's MaxMemberLeaseDuration %v, not the members' %v",
				x, bRun, *sp, a.Holding(), sharderRing.MaxMemberLeaseDuration, memberRing.MaxMemberLeaseDuration)
		}
	}
}
