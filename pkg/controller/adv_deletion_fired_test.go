package controller_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// highAdds returns how many keys reg's controller metrics counted as
// added to a queue at High priority (a delayed add counts when it leaves
// the delay heap for the ready queue).
func highAdds(t *testing.T, reg *prometheus.Registry) float64 {
	families, err := reg.Gather()
	if err != nil {
		t.Error(err)
		return 0
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "lariat_queue_adds_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "priority" && l.GetValue() == "high" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestDelayedAddThatFiredDuringTheDeletionPassDoesNotTellItAgain: while
// the pass telling the handlers an object is gone runs, an EnqueueAfter of
// the key leaves the delay heap for the ready queue (the key, being
// handled, is marked to run again after the pass). The pass tells the
// handlers, they return nil and the key is forgotten; the delayed add,
// no longer pending, was not dropped (only a pending AddAfter was), so it
// ran the key again and told the handlers a second time.
func TestDelayedAddThatFiredDuringTheDeletionPassDoesNotTellItAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/doomed"
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
	rec := newRecorder()
	var nilPasses atomic.Int32
	var c controller.Controller
	var fired atomic.Bool
	var addsBefore float64
	returned := make(chan struct{})
	c, err = controller.New("fired-after", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil && nilPasses.Add(1) == 1 {
			// Two adds were counted before this pass: doomed's creation
			// and its deletion. The third is the delayed add leaving
			// the heap, while this pass runs.
			defer close(returned)
			c.EnqueueAfter(ns, "doomed", time.Millisecond)
			fired.Store(waitUntil(t, func() bool { return highAdds(t, reg) >= addsBefore+3 }))
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger(), Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the informer synced", informer.HasSynced)
	addsBefore = highAdds(t, reg)
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees doomed", func() bool {
		cm, _ := rec.seen(key)
		return cm != nil
	})
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, returned, "the handler, told doomed is gone, returns")
	// One worker, FIFO within a priority: once the first key is handled,
	// the deletion pass has ended (and queued doomed again if its add
	// stood); once the second is, that pass has run.
	handleInTurn(t, c, rec, ns, "after-the-pass", "after-the-rerun")
	if !fired.Load() {
		t.Fatalf("the delayed add of doomed never left the delay heap during its deletion pass (%v adds counted since the start, want 3)", highAdds(t, reg)-addsBefore)
	}
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}

// waitUntil polls cond until it holds (true) or hookBound passes or the
// test ends (false); it may run in a handler (it does not fail the test).
func waitUntil(t *testing.T, cond func() bool) bool {
	deadline := time.Now().Add(hookBound)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-t.Context().Done():
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}
