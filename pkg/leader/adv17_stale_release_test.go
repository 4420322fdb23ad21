package leader_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// adv17Leases is a Lease client whose renewals fail while cut (a leader
// cut off from the API server for its writes only) and whose first
// release is held, as in a slow network, until held returns; it records
// the holder each Get read and each release that the API server took over
// a Lease whose last read named someone else.
type adv17Leases struct {
	coordinationv1client.LeasesGetter
	cut  atomic.Bool
	held func(context.Context)

	mu        sync.Mutex
	lastRead  string
	once      bool
	overwrote []string // holders a successful release cleared
}

func (c *adv17Leases) Leases(ns string) coordinationv1client.LeaseInterface {
	return &adv17Lease{LeaseInterface: c.LeasesGetter.Leases(ns), c: c}
}

type adv17Lease struct {
	coordinationv1client.LeaseInterface
	c *adv17Leases
}

func (l *adv17Lease) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	got, err := l.LeaseInterface.Get(ctx, name, opts)
	if err == nil {
		l.c.mu.Lock()
		l.c.lastRead = ""
		if h := got.Spec.HolderIdentity; h != nil {
			l.c.lastRead = *h
		}
		l.c.mu.Unlock()
	}
	return got, err
}

func (l *adv17Lease) Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	release := lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == ""
	if !release {
		if l.c.cut.Load() {
			return nil, errors.New("adv17: renewal cut off")
		}
		return l.LeaseInterface.Update(ctx, lease, opts)
	}
	l.c.mu.Lock()
	first := !l.c.once
	l.c.once = true
	read := l.c.lastRead
	l.c.mu.Unlock()
	if first {
		l.c.held(ctx)
	}
	got, err := l.LeaseInterface.Update(ctx, lease, opts)
	if err == nil && read != "" && read != "a" {
		l.c.mu.Lock()
		l.c.overwrote = append(l.c.overwrote, read)
		l.c.mu.Unlock()
	}
	return got, err
}

// TestAdv17StaleReleaseClearsTheNextLeadersLease: a leader cut off from
// its renewals stops its work at the renew deadline and client-go then
// releases the Lease (ReleaseOnCancel), judging that it holds it by the
// record it last renewed, not by the Lease it reads for the release.
// When that release reaches the API server only after the Lease expired
// and a standby took it over (a slow network), its update conflicts and
// client-go retries: it reads the Lease, now the standby's, and, still
// believing itself the holder, writes the release over it. The new
// leader's Lease is cleared (holder none, leaseDurationSeconds 1), so any
// other candidate may take it at once while the new leader still writes;
// a Lease the old leader no longer holds must not be released by it.
func TestAdv17StaleReleaseClearsTheNextLeadersLease(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cs := kubernetes.NewForConfigOrDie(cp.Config())
	// A lease duration longer than the tests' default, so that the
	// release (sent about a renew deadline after the last renewal, with
	// a renew deadline to complete) may still be under way once the
	// standby took the expired Lease.
	opts := func(id string) []leader.Option {
		return []leader.Option{leader.WithIdentity(id), leader.WithLeaseDuration(3 * time.Second),
			leader.WithRenewDeadline(2 * time.Second), leader.WithRetryPeriod(retryPeriod),
			leader.WithLogger(controlplanetest.QuietLogger())}
	}
	var b *leader.Elector
	leases := &adv17Leases{LeasesGetter: cs.CoordinationV1()}
	leases.held = func(ctx context.Context) {
		// The release is delivered once the standby leads, or when its
		// own timeout ends.
		for ctx.Err() == nil && !b.Holding() {
			select {
			case <-ctx.Done():
			case <-time.After(retryPeriod / 5):
			}
		}
	}
	a, err := leader.New(leases, ns, "lease", opts("a")...)
	if err != nil {
		t.Fatal(err)
	}
	b, err = leader.New(cs.CoordinationV1(), ns, "lease", opts("b")...)
	if err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.RunTerm(t.Context(), func(ctx context.Context) error { <-ctx.Done(); return nil }) }()
	eventually(t, "a leading", a.Holding)
	go func() { _ = b.Run(t.Context(), func(ctx context.Context) error { <-ctx.Done(); return nil }) }()
	eventually(t, "b seeing a lead", func() bool { return b.Leader() == "a" })
	leases.cut.Store(true)
	eventually(t, "b leading", b.Holding)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	// a's term is over and its release, if any, was answered.
	leases.mu.Lock()
	overwrote := leases.overwrote
	leases.mu.Unlock()
	if len(overwrote) > 0 {
		t.Errorf("a, cut off and stopped, released the Lease after it read it held by %q: the next leader's Lease was cleared (holder none, leaseDurationSeconds 1) while it led", overwrote)
	}
}
