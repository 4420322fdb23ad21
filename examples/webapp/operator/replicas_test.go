package operator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// Lease timings of the replica tests: short, with a margin of a second
// between the renew deadline and the lease duration.
const (
	replicaLease = 3 * time.Second
	replicaRenew = 2 * time.Second
	replicaRetry = 500 * time.Millisecond
)

// firstAfter returns the earliest of times after t (zero if none).
func firstAfter(times []time.Time, t time.Time) time.Time {
	var f time.Time
	for _, x := range times {
		if x.After(t) && (f.IsZero() || x.Before(f)) {
			f = x
		}
	}
	return f
}

// webappReplica is one replica of the WebApp operator under leader
// election: its lease client goes through a proxy the test can cut, its
// operator's writes go straight to the API server (fenced, and recorded).
// Each term of leadership runs a new Operator.
type webappReplica struct {
	name   string
	e      *leader.Elector
	proxy  *controlplanetest.Proxy
	writes controlplanetest.WriteLog // the operator's writes issued
	renews controlplanetest.WriteLog // lease writes accepted, by time sent
	terms  atomic.Int32
	cancel context.CancelFunc
	done   chan error
}

func startWebAppReplica(t *testing.T, ns, name string, ports operator.PortRange) *webappReplica {
	t.Helper()
	r := &webappReplica{name: name, done: make(chan error, 1)}
	proxy, leaseCfg := controlplanetest.NewProxy(t, cp.Config())
	r.proxy = proxy
	leaseCfg = r.renews.Wrap(leaseCfg, true)
	leaseCfg.Timeout = replicaRenew
	log := logrus.New()
	log.SetLevel(logrus.FatalLevel)
	e, err := leader.New(kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ns, "webapp-operator",
		leader.WithIdentity(name), leader.WithLeaseDuration(replicaLease), leader.WithRenewDeadline(replicaRenew),
		leader.WithRetryPeriod(replicaRetry), leader.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	cfg := e.Fence(r.writes.Wrap(cp.Config(), false))
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() {
		r.done <- e.Run(ctx, func(ctx context.Context) error {
			r.terms.Add(1)
			op, err := operator.New(operator.Options{Config: cfg, Namespace: ns, Logger: log, NodePorts: ports, Passes: e.PassTracker()})
			if err != nil {
				return err
			}
			return op.Run(ctx)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// stop ends the replica's Run and waits for it.
func (r *webappReplica) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("%s: Run: %v", r.name, err)
	}
	r.done <- nil // for the cleanup
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func leadingReplica(t *testing.T, a, b *webappReplica) (l, s *webappReplica) {
	t.Helper()
	waitFor(t, "a leader", func() bool {
		switch {
		case a.e.Holding():
			l, s = a, b
		case b.e.Holding():
			l, s = b, a
		}
		return l != nil
	})
	return l, s
}

// freeNodePortsAtEnd deletes the Services of ns when the test ends, after
// the replicas started later have stopped (cleanups run last-in, first-out).
// Node ports are cluster-wide and the test's namespace is never deleted: a
// run of the same test again in this process (go test -count=N) would
// otherwise find its fixed port range held by this run's Services, and its
// WebApps would fail with "provided port is already allocated".
func freeNodePortsAtEnd(t *testing.T, ns string) {
	t.Helper()
	t.Cleanup(func() {
		services := controlplanetest.Clientset(cp.Config()).CoreV1().Services(ns)
		list, err := services.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Errorf("listing the Services to free their node ports: %v", err)
			return
		}
		for _, svc := range list.Items {
			if err := services.Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting Service %s to free its node port: %v", svc.Name, err)
			}
		}
	})
}

func webAppClient(t *testing.T) democtl.WebAppController {
	t.Helper()
	f, err := demo.NewFactoryFromConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createWebApp(t *testing.T, c democtl.WebAppController, ns, name string) {
	t.Helper()
	app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80}}
	if _, err := c.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

func waitAvailable(t *testing.T, c democtl.WebAppController, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := waitForReason(t.Context(), c, ns, name, operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWebAppReplicasHandOver: two replicas of the WebApp operator; only
// the leader writes. The leader's context ends: the other takes over from
// its release (the Lease's holders as a watch saw them: the old leader,
// none, the new one) and makes a new WebApp available, and the old
// leader's last write came before the new one acquired the lease.
func TestWebAppReplicasHandOver(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	holders := controlplanetest.LeaseHolders(t, cp.Config(), ns, "webapp-operator")
	ports := operator.PortRange{First: 32600, Last: 32699}
	freeNodePortsAtEnd(t, ns)
	webapps := webAppClient(t)
	l, s := leadingReplica(t, startWebAppReplica(t, ns, "a", ports), startWebAppReplica(t, ns, "b", ports))
	createWebApp(t, webapps, ns, "one")
	waitAvailable(t, webapps, ns, "one")
	if n := len(s.writes.Times()); n > 0 {
		t.Fatalf("the standby %s wrote %d times", s.name, n)
	}
	if len(l.writes.Times()) == 0 {
		t.Fatalf("the leader %s made WebApp one available without writing", l.name)
	}

	cancelled := time.Now()
	l.stop(t)
	createWebApp(t, webapps, ns, "two")
	waitAvailable(t, webapps, ns, "one", "two")
	acquired := s.renews.First()
	t.Logf("%s took over %v after the leader's context ended", s.name, acquired.Sub(cancelled))
	controlplanetest.Eventually(t, time.Minute, "the watch seeing "+s.name+" hold the lease", func() bool {
		h := holders()
		return len(h) > 0 && h[len(h)-1] == s.name
	})
	if h := holders(); !controlplanetest.HandedOverByRelease(h, l.name, s.name) {
		t.Errorf("%s took the lease over without a release by %s: the Lease's holders in order %q", s.name, l.name, h)
	}
	if last := l.writes.Last(); !last.Before(acquired) {
		t.Errorf("the old leader %s wrote at %v, after %s acquired the lease at %v", l.name, last, s.name, acquired)
	}
}

// TestWebAppReplicaCutOff: the leading replica loses the API server for
// its lease (its operator could still write): it stops writing before its
// lease could expire, the other makes the WebApps created meanwhile
// available; reconnected, it stands by, and when the other is cut off it
// leads again with a new operator.
func TestWebAppReplicaCutOff(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ports := operator.PortRange{First: 32700, Last: 32799}
	freeNodePortsAtEnd(t, ns)
	webapps := webAppClient(t)
	l, s := leadingReplica(t, startWebAppReplica(t, ns, "a", ports), startWebAppReplica(t, ns, "b", ports))
	createWebApp(t, webapps, ns, "one")
	waitAvailable(t, webapps, ns, "one")

	cutOff := func(old, next *webappReplica, prefix string) {
		t.Helper()
		old.proxy.Cut()
		// WebApps keep coming while old may think it leads, and after.
		var names []string
		for i := 0; !next.e.Holding() || i < 10; i++ {
			name := fmt.Sprintf("%s%d", prefix, i)
			createWebApp(t, webapps, ns, name)
			names = append(names, name)
			time.Sleep(replicaRetry)
		}
		waitAvailable(t, webapps, ns, names...)
		renewed := old.renews.Last()
		lastWrite := old.writes.Last()
		acquired := firstAfter(next.renews.Times(), renewed)
		if !lastWrite.Before(renewed.Add(replicaLease)) {
			t.Errorf("%s wrote %v after its last renewal, not within the lease duration %v", old.name, lastWrite.Sub(renewed), replicaLease)
		}
		if !lastWrite.Before(acquired) {
			t.Errorf("%s wrote at %v, after %s acquired the lease at %v", old.name, lastWrite, next.name, acquired)
		}
		t.Logf("%s: last write %v after its last renewal (renew deadline %v); %s acquired %v after it",
			old.name, lastWrite.Sub(renewed), replicaRenew, next.name, acquired.Sub(renewed))
	}
	cutOff(l, s, "cut-")

	l.proxy.Restore()
	waitFor(t, l.name+" seeing "+s.name+" lead", func() bool { return l.e.Leader() == s.name })
	if l.e.Holding() {
		t.Fatalf("%s holds the lease after reconnecting while %s leads", l.name, s.name)
	}
	cutOff(s, l, "again-")
	if n := l.terms.Load(); n != 2 {
		t.Errorf("%s led %d times, want 2", l.name, n)
	}
}
