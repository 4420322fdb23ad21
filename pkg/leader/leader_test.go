package leader_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestHandoverOnCancel: of two replicas only the leader writes; when the
// leader's context ends it stops, releases the lease, and the standby
// takes it over from the release (the Lease's holders as a watch saw
// them: the old leader, none, the new one; an expired lease goes from one
// to the other) and handles new objects. The old leader's last write
// comes before the new leader's acquisition.
func TestHandoverOnCancel(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	holders := controlplanetest.LeaseHolders(t, cp.Config(), ns, "lease")
	a, b := startReplica(t, ns, "a"), startReplica(t, ns, "b")
	l, s := leaderOf(t, a, b)
	createCM(t, ns, "one")
	if by := waitHandled(t, ns, "one"); by != l.name {
		t.Fatalf("ConfigMap one handled by %s, want the leader %s", by, l.name)
	}
	if w := s.writes.Times(); len(w) > 0 {
		t.Fatalf("the standby %s wrote %d times", s.name, len(w))
	}

	cancelled := time.Now()
	l.stop(t)
	createCM(t, ns, "two")
	if by := waitHandled(t, ns, "two"); by != s.name {
		t.Fatalf("ConfigMap two handled by %s, want the new leader %s", by, s.name)
	}
	acquired := s.renews.First()
	t.Logf("takeover %v after the leader's context ended", acquired.Sub(cancelled))
	eventually(t, "the watch seeing "+s.name+" hold the lease", func() bool { h := holders(); return len(h) > 0 && h[len(h)-1] == s.name })
	if h := holders(); !controlplanetest.HandedOverByRelease(h, l.name, s.name) {
		t.Errorf("%s took the lease over without a release by %s: the Lease's holders in order %q", s.name, l.name, h)
	}
	if last := l.writes.Last(); !last.Before(acquired) {
		t.Errorf("the old leader wrote at %v, after the new leader acquired the lease at %v", last, acquired)
	}
}

// TestCutOffLeaderStopsAndLeadsAgain: a leader cut off from the API server
// (its lease client behind a cut proxy; its data path still open, so it
// could write) stops writing before its lease could expire; the standby
// takes over; reconnected, the old leader stands by; when the other is cut
// off in turn it leads again, with its factory started again, and handles
// new objects.
func TestCutOffLeaderStopsAndLeadsAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	a, b := startReplica(t, ns, "a"), startReplica(t, ns, "b")
	l, s := leaderOf(t, a, b)
	createCM(t, ns, "one")
	if by := waitHandled(t, ns, "one"); by != l.name {
		t.Fatalf("ConfigMap one handled by %s, want the leader %s", by, l.name)
	}

	l.proxy.Cut()
	// Work for the cut-off leader (its informers still see the API server)
	// until well after the other took over: one that went on leading would
	// write.
	stream := streamCMs(t, ns, "two-")
	eventually(t, s.name+" leading", s.e.Holding)
	time.Sleep(leaseDuration)
	stream()
	createCM(t, ns, "three")
	if by := waitHandled(t, ns, "three"); by != s.name {
		t.Fatalf("ConfigMap three handled by %s, want the new leader %s", by, s.name)
	}
	checkStoppedInTime(t, l, s)

	l.proxy.Restore()
	eventually(t, l.name+" seeing "+s.name+" as the leader", func() bool { return l.e.Leader() == s.name })
	if l.e.Holding() {
		t.Fatalf("%s holds the lease after reconnecting while %s leads", l.name, s.name)
	}
	if n := l.terms.Load(); n != 1 {
		t.Fatalf("%s led %d times before being cut off, want 1", l.name, n)
	}

	s.proxy.Cut()
	stream = streamCMs(t, ns, "five-")
	eventually(t, l.name+" leading again", l.e.Holding)
	time.Sleep(leaseDuration)
	stream()
	createCM(t, ns, "four")
	if by := waitHandled(t, ns, "four"); by != l.name {
		t.Fatalf("ConfigMap four handled by %s, want %s, leading again", by, l.name)
	}
	if n := l.terms.Load(); n != 2 {
		t.Fatalf("%s has led %d times, want 2", l.name, n)
	}
	checkStoppedInTime(t, s, l)
}

// checkStoppedInTime asserts that old, cut off from the lease, issued its
// last write before its lease could expire (last successful renewal sent +
// lease duration), and before next acquired the lease.
func checkStoppedInTime(t *testing.T, old, next *replica) {
	t.Helper()
	renewed := old.renews.Last()
	lastWrite := old.writes.Last()
	acquired := firstAfter(next.renews.Times(), renewed)
	if lastWrite.IsZero() || renewed.IsZero() || acquired.IsZero() {
		t.Fatalf("missing records: %s last wrote %v, last renewed %v; %s acquired %v", old.name, lastWrite, renewed, next.name, acquired)
	}
	if !lastWrite.Before(renewed.Add(leaseDuration)) {
		t.Errorf("%s wrote %v after its last renewal, not within the lease duration %v", old.name, lastWrite.Sub(renewed), leaseDuration)
	}
	if !lastWrite.Before(acquired) {
		t.Errorf("%s wrote at %v, after %s acquired the lease at %v", old.name, lastWrite, next.name, acquired)
	}
	t.Logf("%s: last write %v after its last renewal (renew deadline %v, lease duration %v); %s acquired %v after it",
		old.name, lastWrite.Sub(renewed), renewDeadline, leaseDuration, next.name, acquired.Sub(renewed))
}

// streamCMs creates a ConfigMap every 50 ms until the returned function is
// called; the function returns once every one of them has been handled.
func streamCMs(t *testing.T, ns, prefix string) func() {
	t.Helper()
	stop := make(chan struct{})
	names := make(chan []string, 1)
	go func() {
		var created []string
		defer func() { names <- created }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			name := fmt.Sprintf("%s%d", prefix, i)
			_, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(),
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			created = append(created, name)
		}
	}()
	return func() {
		close(stop)
		for _, name := range <-names {
			waitHandled(t, ns, name)
		}
	}
}
