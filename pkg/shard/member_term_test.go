package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestLostMemberNeverComesBackUnderItsID: a member cut off from its Lease
// past the lease duration is dead for the sharder, which then moves its
// objects to other members, one patch at a time. When the replica is back,
// it must not hold the dead member's Lease again, nor list and handle the
// objects still labelled with the dead ID: those are being handed to other
// members, and handling them would make two writers for one object. Its
// next term runs under an ID of its own.
func TestLostMemberNeverComesBackUnderItsID(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	old := a.id()
	createCM(t, ns, "before", old)
	eventually(t, "a handling its object", func() bool { return len(a.callsFor(ns+"/before")) > 0 })

	a.leaseProx.Cut()
	eventually(t, "a stopping without its lease", func() bool { return !a.running.Load() })
	// Past the lease duration: the sharder reads the Lease as expired and
	// starts moving the dead member's objects; this one it has not reached.
	time.Sleep(leaseDuration)
	createCM(t, ns, "left", old)
	restored := time.Now()
	a.leaseProx.Restore()
	eventually(t, "a running a new term", func() bool { return a.terms.Load() == 2 && a.running.Load() })
	if a.id() == old {
		t.Errorf("a's new term runs under the dead member's ID %s", old)
	}
	// The new term's share is handled (it is live and works)...
	createCM(t, ns, "new", a.id())
	eventually(t, "a's new term handling its object", func() bool { return len(a.callsFor(ns+"/new")) > 0 })
	// ...and what the dead ID holds is not, and its Lease stays dead.
	time.Sleep(leaseDuration)
	for _, name := range []string{"before", "left"} {
		for _, c := range a.callsFor(ns + "/" + name) {
			if c.at.After(restored) {
				t.Errorf("a handled %s, labelled with the dead ID %s, %v after it was back", name, old, c.at.Sub(restored))
			}
		}
	}
	leases := controlplanetest.Clientset(cp().Config()).CoordinationV1().Leases(ns)
	lease, err := leases.Get(t.Context(), shard.MemberLeaseName(ringName, old), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatal(err)
	case lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(restored):
		t.Errorf("the dead member's Lease was renewed %v after a was back, by %s", lease.Spec.RenewTime.Sub(restored), *lease.Spec.HolderIdentity)
	}
	// A term's Lease is not deleted by its replica: a create of the term
	// held in the network is refused only while the Lease exists, ended
	// or released (the sharder deletes it once its retention passed). The
	// lost term's stays; the stopped term's is released.
	if _, err := leases.Get(t.Context(), shard.MemberLeaseName(ringName, old), metav1.GetOptions{}); err != nil {
		t.Errorf("the lost term's Lease: %v; want it kept", err)
	}
	cur := a.id()
	a.cancel()
	eventually(t, "a stopping", func() bool { return !a.running.Load() })
	// The release is the term's last write, after it stopped running: on
	// a busy machine it lands a little later.
	eventually(t, "the stopped term's Lease kept, released", func() bool {
		l, err := leases.Get(t.Context(), shard.MemberLeaseName(ringName, cur), metav1.GetOptions{})
		if err != nil {
			t.Errorf("the stopped term's Lease: %v; want it kept, released", err)
			return true
		}
		return l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == ""
	})
}

// TestMemberRunsOneTerm: a Member runs once. A second Run, after its
// first ended, fails without taking the Lease again: the ID is dead.
func TestMemberRunsOneTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	m, err := shard.NewMember(controlplanetest.Clientset(cp().Config()).CoordinationV1(), testRing(ns),
		leader.WithIdentity("a"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	other, err := shard.NewMember(controlplanetest.Clientset(cp().Config()).CoordinationV1(), testRing(ns), leader.WithIdentity("a"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID() == other.ID() || !strings.HasPrefix(m.Identity(), "a_") {
		t.Fatalf("two members with base identity a: IDs %s and %s, identity %s; want two IDs and a_<suffix>", m.ID(), other.ID(), m.Identity())
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := 0
	if err := m.Run(ctx, func(context.Context) error { ran++; cancel(); return nil }); err != nil || ran != 1 {
		t.Fatalf("first Run: %v, fn called %d times; want nil and once", err, ran)
	}
	if err := m.Run(t.Context(), func(context.Context) error { ran++; return nil }); err == nil || ran != 1 {
		t.Fatalf("second Run: %v, fn called %d times in all; want an error and fn not called again", err, ran)
	}
	l, err := controlplanetest.Clientset(cp().Config()).CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ringName, m.ID()), metav1.GetOptions{})
	switch {
	case err != nil:
		t.Fatalf("the Lease of the member that stopped: %v; want it kept (released), for the term fence of its creates", err)
	case l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "":
		t.Fatalf("the Lease of the member that stopped is held by %s; want it released", *l.Spec.HolderIdentity)
	}
}
