package leader_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestReleaseWaitsForTheWork: when the leader's context ends, the lease is
// released only after its function has returned, so a standby never leads
// while the old leader is still stopping; and the standby then takes over
// from the release (the Lease's holders as a watch saw them: first, none,
// second), not from an expiry.
func TestReleaseWaitsForTheWork(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	holders := controlplanetest.LeaseHolders(t, cp.Config(), ns, "lease")
	var acquired controlplanetest.WriteLog
	leases := func(rec *controlplanetest.WriteLog) *kubernetes.Clientset {
		return kubernetes.NewForConfigOrDie(rec.Wrap(cp.Config(), true))
	}
	opts := []leader.Option{leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())}
	first, err := leader.New(leases(&controlplanetest.WriteLog{}).CoordinationV1(), ns, "lease", append(opts, leader.WithIdentity("first"))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan time.Time, 1)
	done := make(chan error, 1)
	go func() {
		done <- first.Run(ctx, func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(leaseDuration / 2) // a slow stop: still writing
			returned <- time.Now()
			return nil
		})
	}()
	eventually(t, "first leading", first.Holding)

	second, err := leader.New(leases(&acquired).CoordinationV1(), ns, "lease", append(opts, leader.WithIdentity("second"))...)
	if err != nil {
		t.Fatal(err)
	}
	led := make(chan time.Time, 1)
	go func() {
		_ = second.Run(t.Context(), func(ctx context.Context) error {
			led <- time.Now()
			<-ctx.Done()
			return nil
		})
	}()
	eventually(t, "second seeing first lead", func() bool { return second.Leader() == "first" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stopped := <-returned
	<-led
	if a := acquired.First(); !a.After(stopped) {
		t.Errorf("second acquired the lease at %v, before first's function returned at %v", a, stopped)
	}
	eventually(t, "the watch seeing second hold the lease", func() bool { h := holders(); return len(h) > 0 && h[len(h)-1] == "second" })
	if h := holders(); !controlplanetest.HandedOverByRelease(h, "first", "second") {
		t.Errorf("second took the lease over without a release by first: the Lease's holders in order %q", h)
	}
}

// TestNewRefusesUnsafeTimings: New refuses durations under which an old
// leader could still write after another took over.
func TestNewRefusesUnsafeTimings(t *testing.T) {
	leases := kubernetes.NewForConfigOrDie(cp.Config()).CoordinationV1()
	for _, c := range []struct {
		opts []leader.Option
		want string
	}{
		{[]leader.Option{leader.WithLeaseDuration(1500 * time.Millisecond), leader.WithRenewDeadline(time.Second), leader.WithRetryPeriod(100 * time.Millisecond)}, "whole number of seconds"},
		{[]leader.Option{leader.WithLeaseDuration(2 * time.Second), leader.WithRenewDeadline(2 * time.Second)}, "not shorter than the lease duration"},
		{[]leader.Option{leader.WithRenewDeadline(time.Second), leader.WithRetryPeriod(time.Second)}, "retry period"},
	} {
		if _, err := leader.New(leases, "ns", "lease", c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want an error saying %q", err, c.want)
		}
	}
	if _, err := leader.New(leases, "ns", "lease"); err != nil {
		t.Errorf("New with the defaults: %v", err)
	}
}

// TestCallbackErrorEndsRun: a Manager callback that fails while leading
// ends the term, the other callbacks' context with it, releases the lease
// and comes back from Run, named.
func TestCallbackErrorEndsRun(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	leases := kubernetes.NewForConfigOrDie(cp.Config()).CoordinationV1()
	m, err := leader.NewManager(leases, ns, "lease", leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	otherEnded := make(chan struct{})
	m.OnLeader("waits", func(ctx context.Context) error {
		<-ctx.Done()
		close(otherEnded)
		return nil
	})
	m.OnLeader("fails", func(context.Context) error { return errors.New("boom") })
	err = m.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), `callback "fails": boom`) {
		t.Fatalf("Run: %v, want the failing callback's error, named", err)
	}
	<-otherEnded
	lease, err := leases.Leases(ns).Get(t.Context(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the lease is still held by %q after Run returned", *h)
	}
}
