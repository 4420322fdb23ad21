package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestDeletionToldByTheLastRunIsNotToldAgainAfterARestart: a run's pass
// telling the handlers an object is gone is still under way when the
// controller is started again. The new run forgets which deletions were
// on their way (knownKeys.newQueue) and its comparison queues the key,
// whose pass waits for the last run's (per-key exclusion). The last run's
// pass tells the handlers and they return nil; the new run's pass then
// tells them a second time.
func TestDeletionToldByTheLastRunIsNotToldAgainAfterARestart(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/doomed"
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	var nilPasses atomic.Int32
	inPass, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	c, err := controller.New("restart-delete", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil && nilPasses.Add(1) == 1 {
			close(inPass)
			select { // the controller is started again meanwhile
			case <-release:
			case <-t.Context().Done():
			}
			defer close(returned)
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	first, stopFirst := context.WithCancel(t.Context())
	defer stopFirst()
	if err := c.Start(first, 1); err != nil {
		t.Fatal(err)
	}
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
	waitClosed(t, inPass, "the handler is told doomed is gone")
	stopFirst()
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// The new run has compared its store with the keys it knows once a
	// key enqueued after its start is handled (it compares before its
	// workers start).
	c.Enqueue(ns, "after-the-restart")
	controlplanetest.Eventually(t, 30*time.Second, "the new run handles a key", func() bool {
		_, ok := rec.seen(ns + "/after-the-restart")
		return ok
	})
	close(release)
	waitClosed(t, returned, "the last run's handler returns")
	// One worker, FIFO within a priority: the key the last run's pass
	// hands back when it ends is handled before the second of these
	// (the first covers the few statements between the handler's return
	// and that hand-back).
	for _, name := range []string{"after-the-pass", "after-the-hand-back"} {
		c.Enqueue(ns, name)
		controlplanetest.Eventually(t, 30*time.Second, "the handler reaches "+name, func() bool {
			_, ok := rec.seen(ns + "/" + name)
			return ok
		})
	}
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}
