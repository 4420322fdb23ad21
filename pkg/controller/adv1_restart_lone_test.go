package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// stuckOnce is a handler of key that counts its passes in flight and is
// stuck in its first until release is closed.
type stuckOnce struct {
	key              string
	entered, release chan struct{}

	mu                          sync.Mutex
	inFlight, maxFlight, passes int
	lastV                       string // "v" of the object last given
}

func (h *stuckOnce) handle(k string, obj runtime.Object) error {
	if k != h.key || obj == nil {
		return nil
	}
	h.mu.Lock()
	h.inFlight++
	h.maxFlight = max(h.maxFlight, h.inFlight)
	h.passes++
	n := h.passes
	h.lastV = obj.(*corev1.ConfigMap).Data["v"]
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}()
	if n == 1 {
		close(h.entered)
		<-h.release // stuck past its run's stop
	}
	return nil
}

// TestAdv1ARestartedLoneControllerNeverRunsAKeyTwiceAtOnce: a controller
// of one handler (the fast path of 43aadcf: passes claimed under the
// handler's name) is stopped while its handler is stuck in a pass of
// "busy", and started again; the object changes and the new run takes the
// key (a sentinel queued after the change's event, handled by the new
// run's one worker, shows it did) while the old pass still runs. The new run's pass of busy
// starts only once the old one returned, and it sees the change.
func TestAdv1ARestartedLoneControllerNeverRunsAKeyTwiceAtOnce(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/busy"
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics, err := controller.NewMetrics(reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &stuckOnce{key: key, entered: make(chan struct{}), release: make(chan struct{})}
	sentinel := make(chan struct{})
	var sentinelOnce sync.Once
	c, err := controller.New("lone-restart", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == ns+"/sentinel" {
			sentinelOnce.Do(func() { close(sentinel) })
			return nil
		}
		return h.handle(k, obj)
	}), &controller.Options{Logger: controlplanetest.QuietLogger(), StopGrace: time.Hour, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx1, cancel1 := context.WithCancel(t.Context())
	if err := c.Start(ctx1, 1); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the informer synced", informer.HasSynced)
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "busy"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, h.entered, "the first run's handler is in the pass of busy")
	cancel1()
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	addsBefore := highAdds(t, reg)
	cm.Data["v"] = "2"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The change's event queued busy at High priority in the new run's
	// queue; the sentinel, queued after it at the same priority, is
	// handled by the new run's one worker once it took busy.
	controlplanetest.Eventually(t, 30*time.Second, "the change of busy is queued in the new run", func() bool {
		return highAdds(t, reg) >= addsBefore+1
	})
	c.Enqueue(ns, "sentinel")
	waitClosed(t, sentinel, "the new run handles the sentinel")
	close(h.release)
	controlplanetest.Eventually(t, 30*time.Second, "the new run's pass of busy sees v=2", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.passes >= 2 && h.lastV == "2" && h.inFlight == 0
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxFlight != 1 {
		t.Fatalf("busy had %d passes at once across the restart, want 1", h.maxFlight)
	}
}
