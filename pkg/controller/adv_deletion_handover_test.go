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

// TestDeletionFailedByTheLastRunAfterARestartIsToldByTheNext: a run's pass
// telling the handlers an object is gone is still under way when the
// controller is started again, and its handler then fails: its retry goes
// with the stopped run's queue. The new run kept the key as on its way
// (so that its comparison would not tell it a second time), so the ending
// pass must hand the key to the new run, whose pass tells the handlers.
func TestDeletionFailedByTheLastRunAfterARestartIsToldByTheNext(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/doomed"
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	var nilPasses, toldThrough atomic.Int32
	inPass, release := make(chan struct{}), make(chan struct{})
	c, err := controller.New("restart-delete-fails", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil && nilPasses.Add(1) == 1 {
			close(inPass)
			select { // the controller is started again meanwhile
			case <-release:
			case <-t.Context().Done():
			}
			return errTransient // its retry goes with the stopped run
		}
		if k == key && obj == nil {
			toldThrough.Add(1)
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
	// key enqueued after its start is handled.
	c.Enqueue(ns, "after-the-restart")
	controlplanetest.Eventually(t, 30*time.Second, "the new run handles a key", func() bool {
		_, ok := rec.seen(ns + "/after-the-restart")
		return ok
	})
	close(release)
	controlplanetest.Eventually(t, 30*time.Second, "the new run tells the handler doomed is gone", func() bool {
		return toldThrough.Load() >= 1
	})
	for _, name := range []string{"after-the-telling", "after-another-telling"} {
		c.Enqueue(ns, name)
		controlplanetest.Eventually(t, 30*time.Second, "the handler reaches "+name, func() bool {
			_, ok := rec.seen(ns + "/" + name)
			return ok
		})
	}
	if n := toldThrough.Load(); n != 1 {
		t.Fatalf("the handler saw doomed's deletion through %d times, want once; keys handled: %v", n, rec.order())
	}
}
