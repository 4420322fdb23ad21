package shard

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// Short durations, so tests take seconds. Member leases last
// memberLease; the sharder's election uses the leader package's rules
// with the same scale.
const (
	memberLease   = 2 * time.Second
	memberRenew   = 250 * time.Millisecond
	retryPeriod   = 250 * time.Millisecond
	testTimeout   = 30 * time.Second
	configMapKind = "ConfigMap"
)

var (
	configMaps = Kind{GVK: corev1.SchemeGroupVersion.WithKind(configMapKind)}
	secrets    = Kind{GVK: corev1.SchemeGroupVersion.WithKind("Secret")}
)

// config returns the control plane's config without client-side
// throttling.
func config() *rest.Config {
	c := rest.CopyConfig(cp.Config())
	c.QPS = -1
	return c
}

func clientset() *kubernetes.Clientset { return controlplanetest.Clientset(cp.Config()) }

// member simulates a ring member by keeping its Lease directly, the way
// pkg/leader's Elector would: created labelled, renewed every memberRenew.
type member struct {
	id, identity string
	ns, name     string
	// behind is how far the member's clock runs behind the sharder's:
	// every renewTime it writes is that much in the past.
	behind    time.Duration
	mu        sync.Mutex
	lastRenew time.Time
	stop      context.CancelFunc
	done      chan struct{}
	kube      kubernetes.Interface
}

func startMember(t *testing.T, ring Ring, identity string) *member {
	t.Helper()
	return startMemberBehind(t, ring, identity, 0)
}

// startMemberBehind is startMember for a member whose clock runs behind by
// behind.
func startMemberBehind(t *testing.T, ring Ring, identity string, behind time.Duration) *member {
	t.Helper()
	return startMemberOn(t, clientset(), ring, identity, behind)
}

// startMemberOn is startMemberBehind on the API server kube talks to.
func startMemberOn(t *testing.T, kube kubernetes.Interface, ring Ring, identity string, behind time.Duration) *member {
	t.Helper()
	m := &member{identity: identity, id: MemberID(identity), ns: ring.Namespace, behind: behind, done: make(chan struct{}), kube: kube}
	m.name = MemberLeaseName(ring.Name, m.id)
	leases := kube.CoordinationV1().Leases(ring.Namespace)
	dur := int32(memberLease / time.Second)
	now := metav1.NewMicroTime(time.Now().Add(-behind))
	_, err := leases.Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: m.name, Labels: map[string]string{RingLabel: ring.Name}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &identity, LeaseDurationSeconds: &dur,
			AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.lastRenew = now.Time
	ctx, cancel := context.WithCancel(t.Context())
	m.stop = cancel
	go func() {
		defer close(m.done)
		tk := time.NewTicker(memberRenew)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			l, err := leases.Get(ctx, m.name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			now := metav1.NewMicroTime(time.Now().Add(-m.behind))
			l.Spec.RenewTime = &now
			if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
				m.mu.Lock()
				m.lastRenew = now.Time
				m.mu.Unlock()
			}
		}
	}()
	t.Cleanup(cancel)
	return m
}

// expire stops renewing the lease, the way a member that vanished does, and
// returns the time of its last renewal.
func (m *member) expire() time.Time {
	m.stop()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastRenew
}

// lengthen sets the duration the member's Lease holds for after each
// renewal (it goes on renewing).
func (m *member) lengthen(t *testing.T, d time.Duration) {
	t.Helper()
	leases := m.kube.CoordinationV1().Leases(m.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(t.Context(), m.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		secs := int32(d / time.Second)
		l.Spec.LeaseDurationSeconds = &secs
		_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// release stops renewing and writes the release a member that stops
// cleanly writes (client-go's ReleaseOnCancel): no holder, a one-second
// duration, renewed now. A holder cleared alone is a hand edit, which the
// sharder judges from the last copy naming the member.
func (m *member) release(t *testing.T) {
	t.Helper()
	m.expire()
	leases := m.kube.CoordinationV1().Leases(m.ns)
	l, err := leases.Get(t.Context(), m.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	empty, one, now := "", int32(1), metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &empty, &one, &now
	if _, err := leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testRing returns a ring named after the test in a fresh namespace.
func testRing(t *testing.T, kinds ...Kind) Ring {
	t.Helper()
	return Ring{Name: "ring", Namespace: controlplanetest.Namespace(t, cp.Config()), Kinds: kinds}
}

// sharderOptions are short-timed options for the tests; log, if not nil,
// records the sharder's warnings.
func sharderOptions(log *logtest.Hook) SharderOptions {
	l := controlplanetest.QuietLogger()
	if log != nil {
		l.SetLevel(logrus.WarnLevel)
		l.AddHook(log)
		l.SetOutput(discard{})
	}
	return SharderOptions{
		Leader: []leader.Option{leader.WithIdentity("sharder"), leader.WithLeaseDuration(2 * time.Second),
			leader.WithRenewDeadline(time.Second), leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())},
		Logger:      l,
		RetryPeriod: retryPeriod,
		// The tests of the GC see dead members' Leases deleted soon;
		// the retention itself is TestStalledMemberCreateNeverLandsAfterTheMove's.
		LeaseRetention: 2 * time.Second,
	}
}

// leaderTerms makes the sharder's leader log to a hook, and returns a
// function that counts the terms it has led so far.
func leaderTerms(o *SharderOptions) func() int {
	l := controlplanetest.QuietLogger()
	l.SetLevel(logrus.InfoLevel)
	l.SetOutput(discard{})
	hook := logtest.NewLocal(l)
	o.Leader = append(o.Leader, leader.WithLogger(l))
	return func() int {
		n := 0
		for _, e := range hook.AllEntries() {
			if e.Message == "leader: leading" {
				n++
			}
		}
		return n
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// runSharder starts s and returns once it leads; it stops when the test
// ends.
func runSharder(t *testing.T, s *Sharder) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sharder Run: %v", err)
		}
	})
	eventually(t, "the sharder leads with synced views", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cur != nil && s.cur.members.view() != nil
	})
}

func newSharder(t *testing.T, cfg *rest.Config, ring Ring, o SharderOptions) *Sharder {
	t.Helper()
	s, err := NewSharder(cfg, ring, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	controlplanetest.Eventually(t, testTimeout, what, cond)
}

func createConfigMaps(t *testing.T, ns, prefix string, n int) {
	t.Helper()
	cms := clientset().CoreV1().ConfigMaps(ns)
	for i := range n {
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// labelsOf returns the ConfigMaps of ns by name: their assignment and
// whether they carry the drain label.
type state struct {
	member   string
	draining bool
}

func configMapStates(t *testing.T, ring Ring) map[string]state {
	t.Helper()
	l, err := clientset().CoreV1().ConfigMaps(ring.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]state{}
	for _, cm := range l.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		_, d := cm.Labels[DrainLabel(ring.Name)]
		out[cm.Name] = state{member: cm.Labels[AssignmentLabel(ring.Name)], draining: d}
	}
	return out
}

// waitSettled waits until every ConfigMap is assigned as Pick says over
// members, with no drain label, and returns the states.
func waitSettled(t *testing.T, ring Ring, members ...*member) map[string]state {
	t.Helper()
	var ids []string
	for _, m := range members {
		ids = append(ids, m.id)
	}
	var st map[string]state
	eventually(t, "every ConfigMap assigned to its wanted member", func() bool {
		st = configMapStates(t, ring)
		for name, s := range st {
			if s.draining || s.member != Pick(ring.Namespace+"/"+name, ids) {
				return false
			}
		}
		return true
	})
	return st
}

// ack acknowledges drains the way a member does: a merge patch removing
// both labels and writing the release into the trail, with the
// resourceVersion it read.
func ack(t *testing.T, ring Ring, name string) {
	t.Helper()
	cms := clientset().CoreV1().ConfigMaps(ring.Namespace)
	cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := ackPatch(ring.Name, cm.Labels[AssignmentLabel(ring.Name)], cm.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(t.Context(), name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// metricSum returns the sum of the samples (counters or gauges) of the
// metric name in reg whose labels include labels (-1 if there is none).
func metricSum(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum, found := 0.0, false
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	samples:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue samples
				}
			}
			if m.Counter != nil {
				sum += m.Counter.GetValue()
			} else {
				sum += m.Gauge.GetValue()
			}
			found = true
		}
	}
	if !found {
		return -1
	}
	return sum
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
