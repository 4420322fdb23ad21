package shard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// adv16ReleaseByHand edits a live member's Lease by hand into the shape of
// client-go's release (holder cleared, leaseDurationSeconds 1, renewTime
// and acquireTime now): what a script that "frees" a stuck Lease, or a
// kubectl edit copying a released Lease, writes. The ID still marks the
// member's 60 s; the copy says 1 s.
func adv16ReleaseByHand(l *coordinationv1.Lease) {
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity = ptr.To("")
	l.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	l.Spec.RenewTime = &now
	l.Spec.AcquireTime = &now
}

// TestAdv16LeaseReleasedByHandMovesObjectsFromALiveMember: a live
// member's Lease edited by hand into a release's shape is read by the
// running sharder as the member's own release (released: holder cleared,
// duration 1, renewTime not before the last seen), and its objects move at
// once, while the member's term, fence and a handler still run until its
// renew deadline (50 s here). A holder cleared by hand alone waits
// (TestAdv10LeaseHolderClearedByHandMovesObjectsFromALiveMember); the
// duration edited down to 1 s with it does not, although the member's ID
// marks 60 s. Failed so before the release proof (release_proof.go): an
// edit has no secret whose hash the member's ID carries.
func TestAdv16LeaseReleasedByHandMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "released by hand: holder cleared, leaseDurationSeconds 1", false, func(t *testing.T, leases coordinationv1client.LeaseInterface, name string) {
		adv10Edit(adv16ReleaseByHand)(t, leases, name)
	})
}

// TestAdv16LeaseReleasedByHandWhileNoSharderRunsMovesObjectsFromACutOffMember:
// the same edit made while no sharder runs (between a sharder's stop and
// the next one's start: a failover, a rolling upgrade) on the Lease of a
// member cut off from writing it (its renewals fail, so it cannot take
// the holderless Lease back; its term, fence and handler run until its
// renew deadline, 50 s after its last renewal). The next sharder's first
// copy is the release's shape; released() needs no earlier copy, so it
// moved the member's objects at once instead of waiting the 60 s the ID
// marks, before the release proof, as above.
func TestAdv16LeaseReleasedByHandWhileNoSharderRunsMovesObjectsFromACutOffMember(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advrelforged", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	// A's Lease writes go through cut: once set, every write of a Lease
	// fails as a network that drops them would.
	var cut atomic.Bool
	cutCfg := rest.CopyConfig(cfg)
	cutCfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if cut.Load() && req.Method != http.MethodGet && strings.Contains(req.URL.Path, "/leases") {
				return nil, errors.New("the network drops the member's Lease write")
			}
			return next.RoundTrip(req)
		})
	})
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", controlplanetest.Clientset(cutCfg).CoordinationV1(), spans, timings, true)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	stopFirst := advRunStoppableSharder(t, ring, "sharder")
	var releaseOnce sync.Once
	releaseA := func() { releaseOnce.Do(func() { close(spans.release) }) }
	t.Cleanup(releaseA)
	ctx := t.Context()
	x := advHoldOneOnA(t, kube, ring, a, b, spans)
	stopFirst()
	cut.Store(true)
	adv10Edit(adv16ReleaseByHand)(t, kube.CoordinationV1().Leases(ns), MemberLeaseName(ring.Name, a.ID()))
	advRunStoppableSharder(t, ring, "sharder-next")
	// Two minutes are past A's renew deadline: a sharder that waits for
	// it moves X only once A's term, and so its handler, ended, or never
	// (safe either way).
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
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): A, cut off from its Lease, had it edited by hand into a release's shape while no sharder ran, and the next sharder took it for A's release (A holding: %v)",
			x, bRun, aRun, holding)
	}
}
