package leader_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv17ReleaseLabelStaysOnTheLeaseHeldInTheNextTerm: WithReleaseLabels
// promises labels "written on the Lease with its release only (never with
// an acquisition or a renewal), so that whoever watches the Lease can tell
// the holder's own release from an edit of the same shape". client-go's
// LeaseLock only adds labels to the Lease it read, so the label a release
// wrote stays on the Lease when the same Elector acquires it again (a
// second RunTerm, or Run's next term after a lost one): while it holds the
// Lease in the next term, the Lease carries the release label and its
// value already, and an edit clearing the holder would carry it too.
func TestAdv17ReleaseLabelStaysOnTheLeaseHeldInTheNextTerm(t *testing.T) {
	const key, secret = "test.lariat.dev/release-proof", "s3cr3t"
	ns := controlplanetest.Namespace(t, cp.Config())
	cs := kubernetes.NewForConfigOrDie(cp.Config())
	e, err := leader.New(cs.CoordinationV1(), ns, "lease", leader.WithIdentity("one"),
		leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()),
		leader.WithReleaseLabels(map[string]string{key: secret}))
	if err != nil {
		t.Fatal(err)
	}
	// term runs one term of e and returns its stop, which waits for
	// RunTerm to return.
	term := func() func() {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- e.RunTerm(ctx, func(ctx context.Context) error { <-ctx.Done(); return nil })
		}()
		eventually(t, "the term leading", e.Holding)
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	lease := func() (holder string, label string, ok bool) {
		l, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "lease", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		label, ok = l.Labels[key]
		return holder, label, ok
	}

	term()() // the first term, released
	if h, v, _ := lease(); h != "" || v != secret {
		t.Fatalf("after the first term's release: holder %q, release label %q; want no holder and %q", h, v, secret)
	}
	stop := term()
	defer stop()
	// The next term acquired the Lease (Holding: a renewal naming it
	// succeeded, so the Lease as read now names it too).
	h, v, ok := lease()
	if h != "one" {
		t.Fatalf("the second term holds the Lease but it names %q", h)
	}
	if ok && v == secret {
		t.Errorf("the Lease held by %q in its second term carries the release label %s=%q written by the first term's release: an edit clearing its holder now looks like its own release", h, key, v)
	}
}
