package leader_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestRunTermDoesNotCampaignAgain: RunTerm holds the lease for one term.
// Cut off past its renew deadline, its work ends with ErrLeaseLost and it
// returns while its context is still live; restored, it does not take the
// lease again (Run would).
func TestRunTermDoesNotCampaignAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	proxy, cfg := controlplanetest.NewProxy(t, cp.Config())
	cfg.Timeout = renewDeadline
	var writes controlplanetest.WriteLog
	e, err := leader.New(kubernetes.NewForConfigOrDie(writes.Wrap(cfg, true)).CoordinationV1(), ns, "lease",
		leader.WithIdentity("once"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	var cause error
	done := make(chan error, 1)
	go func() {
		done <- e.RunTerm(t.Context(), func(ctx context.Context) error {
			calls++
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil
		})
	}()
	eventually(t, "holding the lease", e.Holding)
	proxy.Cut()
	select {
	case err := <-done:
		if err != nil || calls != 1 || !errors.Is(cause, leader.ErrLeaseLost) {
			t.Fatalf("RunTerm: %v after %d calls, the work ended with %v; want nil, one call, ErrLeaseLost", err, calls, cause)
		}
	case <-time.After(3 * leaseDuration):
		t.Fatal("RunTerm did not return after the lease was lost")
	}
	proxy.Restore()
	restored := time.Now()
	time.Sleep(leaseDuration + retryPeriod)
	if last := writes.Last(); last.After(restored) {
		t.Fatalf("the lease was written %v after the connection was back: RunTerm campaigned again", last.Sub(restored))
	}
}
