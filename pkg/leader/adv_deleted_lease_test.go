package leader_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// advTermLog records what replica A's term was doing when replica B's
// term began.
type advTermLog struct {
	mu                sync.Mutex
	aLeading          bool // a's term function is running
	aWork             context.Context
	bBegan            bool
	aLeadingAtBBegan  bool
	aHoldingAtBBegan  bool
	aWorkLiveAtBBegan bool
}

// TestAdvDeletedLeaseLetsAStandbyLeadBesideTheLeader: an administrator
// deletes the leader election Lease by hand (kubectl delete lease, the
// usual way to force a new election) while the leader A is cut off from
// it. The standby B finds no Lease, creates it and leads at once; A's term
// goes on, and its fence lets writes through, until A's renew deadline
// (counted from its last renewal, which nothing B did can move). Two
// leaders at once: B's term began while A's term function ran, A's work
// context was live and A.Holding() was true. The guarantee that the old
// leader stops "before anyone else can lead" rests on the standby waiting
// a lease duration after the last change it saw; a Lease that is gone is
// taken without waiting.
func TestAdvDeletedLeaseLetsAStandbyLeadBesideTheLeader(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	const lease = "deleted-by-hand"
	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	a, err := leader.New(controlplanetest.Clientset(proxied).CoordinationV1(), ns, lease, append(timings, leader.WithIdentity("a"))...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := leader.New(kube.CoordinationV1(), ns, lease, append(timings, leader.WithIdentity("b"))...)
	if err != nil {
		t.Fatal(err)
	}
	log := &advTermLog{}
	controlplanetest.Run(t, func(ctx context.Context) error {
		return a.Run(ctx, func(work context.Context) error {
			log.mu.Lock()
			log.aLeading, log.aWork = true, work
			log.mu.Unlock()
			<-work.Done()
			log.mu.Lock()
			log.aLeading = false
			log.mu.Unlock()
			return nil
		})
	})
	controlplanetest.Eventually(t, time.Minute, "A leads", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.aLeading
	})
	holders := controlplanetest.LeaseHolders(t, cfg, ns, lease)
	controlplanetest.Run(t, func(ctx context.Context) error {
		return b.Run(ctx, func(work context.Context) error {
			log.mu.Lock()
			if !log.bBegan {
				log.bBegan = true
				log.aLeadingAtBBegan = log.aLeading
				log.aHoldingAtBBegan = a.Holding()
				log.aWorkLiveAtBBegan = log.aWork.Err() == nil
			}
			log.mu.Unlock()
			<-work.Done()
			return nil
		})
	})
	controlplanetest.Eventually(t, time.Minute, "B stands by (it saw A as the holder)", func() bool { return b.Leader() == "a" })

	proxy.Cut() // A can no longer renew, nor re-create the Lease
	if err := kube.CoordinationV1().Leases(ns).Delete(t.Context(), lease, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Either B leads, or A's term ends first (B's lead is then a
	// handover, and the check below passes).
	controlplanetest.Eventually(t, 3*time.Minute, "B leads, or A's term ends", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.bBegan || log.aWork.Err() != nil
	})
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.bBegan && (log.aLeadingAtBBegan || log.aHoldingAtBBegan || log.aWorkLiveAtBBegan) {
		t.Fatalf("B's term began while A still led: A's term function running %v, A.Holding() %v (its fence open), A's work context live %v; the Lease's holders: %v",
			log.aLeadingAtBBegan, log.aHoldingAtBBegan, log.aWorkLiveAtBBegan, holders())
	}
}
