package generic_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestOnRemoveNeverRunsAgainOnAStaleCopy: two OnRemove handlers of a kind;
// the pass that runs both cleanups removes the last finalizer, and the
// object is gone. A pass queued while the cache still holds a copy from
// before that pass (its watch lags) must not run either cleanup again: the
// handlers already wrote a newer version of the object than the cached one.
// lasso skips such copies too (it remembers objects its handlers finalized);
// Lariat skips any copy older than its own handlers' last write, and counts
// the skip in lariat_handler_stale_passes_total.
func TestOnRemoveNeverRunsAgainOnAStaleCopy(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	gate, cfg := newWatchGate(cp.Config())
	reg := prometheus.NewRegistry()
	f, err := generic.NewFactoryFromConfig(cfg, nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{
			Logger: controlplanetest.QuietLogger(), Registerer: reg,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cms := newConfigMaps(t, f)
	var first, second, deletions counter
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	cms.OnRemove(t.Context(), "first", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if first.inc() == 1 {
			entered <- struct{}{}
			<-release
		}
		return cm, nil
	})
	cms.OnRemove(t.Context(), "second", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		second.inc()
		return cm, nil
	})
	cms.OnChange(t.Context(), "deletions", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil {
			deletions.inc()
		}
		return cm, nil
	})
	start(t, f)

	createCM(t, ns, "doomed")
	both := finalizersAre(t, ns, "doomed", generic.FinalizerName("first"), generic.FinalizerName("second"))
	eventually(t, "both finalizers added", both)
	eventually(t, "both finalizers cached", func() bool {
		cm, err := cms.Cache().Get(ns, "doomed")
		return err == nil && len(cm.Finalizers) == 2
	})
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	<-entered
	// From here on the cache keeps the copy the deletion pass started from.
	gate.hold()
	close(release)
	eventually(t, "the object gone once both cleanups ran", gone(ns, "doomed"))
	if first.get() != 1 || second.get() != 1 {
		t.Fatalf("cleanups ran %d and %d times in the deletion pass, want once each", first.get(), second.get())
	}

	stale := func() float64 { return metricSum(t, reg, "lariat_handler_stale_passes_total") }
	cms.Enqueue(ns, "doomed")
	eventually(t, "the pass on the stale copy skipped, or a cleanup run again", func() bool {
		return stale() > 0 || first.get() > 1 || second.get() > 1
	})
	gate.open()
	eventually(t, "the deletion reaching the handlers", func() bool { return deletions.get() > 0 })
	if first.get() != 1 || second.get() != 1 {
		t.Fatalf("cleanups ran %d and %d times, want once each: a pass ran them again on a stale copy of the object", first.get(), second.get())
	}
}

// metricSum sums the samples of the counter or gauge name in reg.
func metricSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// watchGate holds back what watches read from the API server while held,
// so a test can make an informer's cache lag behind the server at a chosen
// moment; other requests (the handlers' writes) go through.
type watchGate struct {
	mu   sync.Mutex
	gate chan struct{} // nil while open; closed by open
}

func newWatchGate(cfg *rest.Config) (*watchGate, *rest.Config) {
	g := &watchGate{}
	gated := rest.CopyConfig(cfg)
	gated.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Query().Get("watch") == "true" {
				resp.Body = gatedBody{resp.Body, g}
			}
			return resp, err
		})
	})
	return g, gated
}

func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate == nil {
		g.gate = make(chan struct{})
	}
}

func (g *watchGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

func (g *watchGate) wait() {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
}

// gatedBody delivers what it read only once the gate is open.
type gatedBody struct {
	io.ReadCloser
	g *watchGate
}

func (b gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.wait()
	return n, err
}
