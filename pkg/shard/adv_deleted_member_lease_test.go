package shard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// advSpan is one handler run: its start and end in one sequence shared by
// every member of the test (end 0: still running).
type advSpan struct {
	member, name string
	start, end   int
}

// advSpans records handler runs; hold, when set, makes a run of that
// member and object wait until release is closed (a slow handler).
type advSpans struct {
	mu      sync.Mutex
	seq     int
	spans   []*advSpan
	hold    struct{ member, name string }
	release chan struct{}
}

func (s *advSpans) begin(member, name string) (*advSpan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	sp := &advSpan{member: member, name: name, start: s.seq}
	s.spans = append(s.spans, sp)
	return sp, s.hold.member == member && s.hold.name == name
}

func (s *advSpans) end(sp *advSpan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	sp.end = s.seq
}

// find returns a copy of the first run matching, and whether there is one.
func (s *advSpans) find(member, name string, running bool) (advSpan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.spans {
		if sp.member == member && sp.name == name && (!running || sp.end == 0) {
			return *sp, true
		}
	}
	return advSpan{}, false
}

// advMember joins ring as member label (leases is its Lease client) with a
// ConfigMap handler recorded in spans, and returns it once its factory runs.
// mayLose tells that the test takes the member's Lease away: its Run
// returning ErrMembershipLost is then expected, not a failure.
func advMember(t *testing.T, ring Ring, label string, leases coordinationv1client.LeasesGetter, spans *advSpans, timings []leader.Option, mayLose bool) *Member {
	t.Helper()
	cfg := cp.Config()
	m, err := NewMember(leases, ring, timings...)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	controlplanetest.Run(t, func(ctx context.Context) error {
		err := m.Run(ctx, func(ctx context.Context) error {
			opts := &generic.FactoryOptions{Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}}}
			f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, opts))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "record", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if cm == nil {
					return nil, nil
				}
				sp, hold := spans.begin(label, cm.Name)
				defer spans.end(sp)
				if hold {
					// A slow handler, such as an external call, that
					// stops when its member's term ends, as handlers must
					// (one that outlives its term is left to the Lease's
					// expiry and the closed fence, not to this test).
					select {
					case <-spans.release:
					case <-ctx.Done():
					}
				}
				return cm, nil
			})
			if err := f.Start(ctx, 2); err != nil {
				return err
			}
			close(started)
			<-ctx.Done()
			return f.Wait(context.WithoutCancel(ctx))
		})
		if mayLose && errors.Is(err, ErrMembershipLost) {
			return nil
		}
		return err
	})
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("member %s did not start", label)
	}
	return m
}

// TestAdvDeletedMemberLeaseMovesObjectsFromALiveMember: a member Lease
// deleted by hand (kubectl delete lease, a cleanup script) is read by the
// sharder as a dead member, and the member's objects are assigned to
// another member directly, without a drain, while the member still runs:
// its term, its fence (until its renew deadline, 50 s here) and a handler
// of one of those objects. The other member's handler for the object then
// begins while the first one's still runs: two replicas' runs for one
// object overlap. (The member's Lease client is cut off, so it cannot
// re-create the Lease; its handler is a slow one, as any handler may be.)
func TestAdvDeletedMemberLeaseMovesObjectsFromALiveMember(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advgone", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	a := advMember(t, ring, "a", controlplanetest.Clientset(proxied).CoordinationV1(), spans, timings, true)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)
	var releaseOnce sync.Once
	releaseA := func() { releaseOnce.Do(func() { close(spans.release) }) }
	t.Cleanup(releaseA) // registered last, so it runs before the stops wait

	ctx := t.Context()
	x := advHoldOneOnA(t, kube, ring, a, b, spans)

	proxy.Cut() // A can no longer renew its Lease, nor create it again
	if err := kube.CoordinationV1().Leases(ns).Delete(ctx, MemberLeaseName(ring.Name, a.ID()), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 2*time.Minute, "B handles X, or A's handler for X ends", func() bool {
		_, bRan := spans.find("b", x, false)
		_, aRuns := spans.find("a", x, true)
		return bRan || !aRuns
	})
	aRun, aRuns := spans.find("a", x, true)
	bRun, bRan := spans.find("b", x, false)
	releaseA()
	if bRan && aRuns {
		cm, _ := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): A's Lease was deleted by hand while A's term and fence were live (A holding: %v); the object now names member %q (B is %s)",
			x, bRun, aRun, a.Holding(), cm.Labels[AssignmentLabel(ring.Name)], b.ID())
	}
}
