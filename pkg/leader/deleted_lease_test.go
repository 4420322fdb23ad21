package leader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestDeletedLeaseEndsTheHoldersTerm: a Lease deleted under its holder
// (kubectl delete lease, to force an election) counts as lost for the
// holder, not as free: it does not create the Lease again within its term,
// whose work context ends with ErrLeaseLost by its renew deadline, as for
// a lease it could not renew. (A standby meanwhile waits for the lease
// duration since it last saw the holder's record:
// TestAdvDeletedLeaseLetsAStandbyLeadBesideTheLeader.)
func TestDeletedLeaseEndsTheHoldersTerm(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	const lease = "deleted-under-holder"
	a, err := leader.New(kube.CoordinationV1(), ns, lease, leader.WithIdentity("a"),
		leader.WithLeaseDuration(3*time.Second), leader.WithRenewDeadline(2*time.Second), leader.WithRetryPeriod(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		leading bool
		ended   bool
		cause   error
	)
	controlplanetest.Run(t, func(ctx context.Context) error {
		return a.RunTerm(ctx, func(work context.Context) error {
			mu.Lock()
			leading = true
			mu.Unlock()
			<-work.Done()
			mu.Lock()
			ended, cause = true, context.Cause(work)
			mu.Unlock()
			return nil
		})
	})
	controlplanetest.Eventually(t, time.Minute, "A leads", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return leading
	})
	if err := kube.CoordinationV1().Leases(ns).Delete(t.Context(), lease, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "A's term ends", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ended
	})
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(cause, leader.ErrLeaseLost) {
		t.Fatalf("A's work context ended with %v, want ErrLeaseLost", cause)
	}
	if a.Holding() {
		t.Fatal("A still holds the lease after its term ended")
	}
}
