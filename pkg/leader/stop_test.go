package leader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// passes records the handler runs of one replica: when each began and
// ended, by key.
type passes struct {
	mu    sync.Mutex
	began map[string][]time.Time
	ended map[string][]time.Time
	// first is closed when the first pass of any key begins.
	first     chan struct{}
	firstOnce sync.Once
}

func newPasses() *passes {
	return &passes{began: map[string][]time.Time{}, ended: map[string][]time.Time{}, first: make(chan struct{})}
}

func (p *passes) begin(key string) {
	p.mu.Lock()
	p.began[key] = append(p.began[key], time.Now())
	p.mu.Unlock()
	p.firstOnce.Do(func() { close(p.first) })
}

func (p *passes) end(key string) {
	p.mu.Lock()
	p.ended[key] = append(p.ended[key], time.Now())
	p.mu.Unlock()
}

func (p *passes) of(key string) (began, ended []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.began[key]...), append([]time.Time(nil), p.ended[key]...)
}

// slowReplica is a replica whose ConfigMap handler runs hold(key) before
// it returns.
type slowReplica struct {
	e        *leader.Elector
	f        *generic.Factory
	passes   *passes
	returned chan time.Time // when the term function returned
	done     chan error
	cancel   context.CancelFunc
}

func startSlowReplica(t *testing.T, ns, name string, log logrus.FieldLogger, ctrl controller.SharedControllerFactoryOptions, hold func(key string)) *slowReplica {
	t.Helper()
	r := &slowReplica{passes: newPasses(), returned: make(chan time.Time, 10), done: make(chan error, 1)}
	e, err := leader.New(kubernetes.NewForConfigOrDie(cp.Config()).CoordinationV1(), ns, "lease",
		leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	ctrl.Logger = log
	f, err := generic.NewFactoryFromConfig(e.Fence(cp.Config()), nil, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: ctrl,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.f = f
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	cms.OnChange(t.Context(), "slow", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		r.passes.begin(key)
		defer r.passes.end(key)
		hold(key)
		return nil, nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() {
		r.done <- e.Run(ctx, func(ctx context.Context) error {
			defer func() { r.returned <- time.Now() }()
			return termFunction(ctx, f)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// termFunction is the term function as docs/replicas.md shows it.
func termFunction(ctx context.Context, f *generic.Factory) error {
	return f.Run(ctx, 2)
}

// TestTermEndsOnlyAfterItsHandlersReturned: a leader's context ends while
// its handler for a key runs (a 3 s handler); the term function returns,
// and the lease is released, only after that handler returned, so the
// next leader's handler for the key begins after the old one ended.
func TestTermEndsOnlyAfterItsHandlersReturned(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "slow")
	key := ns + "/slow"
	secondBegan := make(chan struct{})
	var once sync.Once
	// The first leader's handler takes 3 s, or less if the second's
	// handler for the key begins meanwhile: that is the overlap the test
	// looks for, and nothing more is to be learnt by waiting longer.
	first := startSlowReplica(t, ns, "first", controlplanetest.QuietLogger(), controller.SharedControllerFactoryOptions{}, func(string) {
		select {
		case <-time.After(3 * time.Second):
		case <-secondBegan:
		}
	})
	<-first.passes.first
	second := startSlowReplica(t, ns, "second", controlplanetest.QuietLogger(), controller.SharedControllerFactoryOptions{}, func(k string) {
		if k == key {
			once.Do(func() { close(secondBegan) })
		}
	})
	eventually(t, "second seeing first lead", func() bool { return second.e.Leader() == "first" })
	first.cancel()
	if err := <-first.done; err != nil {
		t.Fatalf("first: Run: %v", err)
	}
	first.done <- nil // for the cleanup
	returned := <-first.returned
	eventually(t, "second handling the key", func() bool {
		_, ended := second.passes.of(key)
		return len(ended) > 0
	})
	_, firstEnded := first.passes.of(key)
	if len(firstEnded) == 0 {
		t.Fatalf("first's handler for %s had not returned when its Run returned", key)
	}
	end := firstEnded[len(firstEnded)-1]
	if returned.Before(end) {
		t.Errorf("first's term function returned at %v, before its handler for %s returned at %v", returned.Format(time.StampMicro), key, end.Format(time.StampMicro))
	}
	secondPasses, _ := second.passes.of(key)
	if b := secondPasses[0]; b.Before(end) {
		t.Errorf("second's handler for %s began at %v, before first's returned at %v (%v of overlap)", key, b.Format(time.StampMicro), end.Format(time.StampMicro), end.Sub(b))
	}
}

// TestHandlerOutlivingTheGraceKeepsTheLease: a handler still running when
// the grace period after its term's end has passed is named in the log,
// counted, and named in Run's error, and keeps the lease from being
// released: Run returns with the lease still naming the leader, so the
// next leader waits for it to expire.
func TestHandlerOutlivingTheGraceKeepsTheLease(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "stuck")
	release := make(chan struct{})
	defer close(release)
	log, hook := logtest.NewNullLogger()
	reg := prometheus.NewRegistry()
	r := startSlowReplica(t, ns, "stuck", log, controller.SharedControllerFactoryOptions{StopGrace: time.Second, Registerer: reg},
		func(string) { <-release })
	<-r.passes.first
	r.cancel()
	err := <-r.done
	r.done <- nil // for the cleanup
	var still *controller.StillRunningError
	if !errors.As(err, &still) || len(still.Handlers) != 1 {
		t.Fatalf("Run: %v, want a *controller.StillRunningError naming the handler", err)
	}
	want := controller.RunningHandler{GVK: "v1/ConfigMap", Key: ns + "/stuck", Handler: "slow"}
	if h := still.Handlers[0]; h.GVK != want.GVK || h.Key != want.Key || h.Handler != want.Handler {
		t.Errorf("Run's error names %+v, want %+v", h, want)
	}
	logged := false
	for _, e := range hook.AllEntries() {
		if e.Data["gvk"] == want.GVK && e.Data["key"] == want.Key && e.Data["handler"] == want.Handler && e.Level == logrus.WarnLevel {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no warning names the handler still running (gvk %s, key %s, handler %s)", want.GVK, want.Key, want.Handler)
	}
	if n := counterValue(t, reg, "lariat_handlers_outlived_stop_grace_total"); n != 1 {
		t.Errorf("lariat_handlers_outlived_stop_grace_total is %v, want 1", n)
	}
	lease, err := kubernetes.NewForConfigOrDie(cp.Config()).CoordinationV1().Leases(ns).Get(t.Context(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h != "stuck" {
		t.Errorf("the lease was released (holder %q) while a handler still ran", ptrString(h))
	}
}

// counterValue sums the samples of a counter in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
