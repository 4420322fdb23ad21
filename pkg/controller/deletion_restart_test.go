package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestDeletionJustBeforeAStopReachesTheHandlers (issue 24, case 6): an
// object the handlers saw is deleted just before the factory stops: the
// cache has dropped it, but the deletion's key was still waiting for a
// worker (the only one is busy) when the run's context ended, and is
// dropped with the run's queue. A restart starts from the cache, which no
// longer names the object. The handlers must still be told it is gone.
func TestDeletionJustBeforeAStopReachesTheHandlers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	reg := prometheus.NewRegistry()
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{Registerer: reg}})
	c := configMapController(t, f)
	rec := newRecorder()
	busy, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.RegisterHandler(t.Context(), "record", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if key == ns+"/busy" && obj != nil {
			once.Do(func() { close(busy) })
			<-release
		}
		return rec.OnChange(key, obj)
	}))
	first, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(first, 1); err != nil {
		t.Fatal(err)
	}
	createCM(t, cp.Config(), ns, "doomed", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handlers see the object", func() bool {
		cm, _ := rec.seen(ns + "/doomed")
		return cm != nil
	})
	createCM(t, cp.Config(), ns, "busy", nil)
	<-busy // the run's only worker is busy from now on

	if err := kube(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the deletion queued behind the busy worker", func() bool {
		_, ok, err := c.Informer().GetStore().GetByKey(ns + "/doomed")
		return err == nil && !ok && configMapMetric(t, reg, "lariat_queue_depth") == 1
	})
	cancel()
	close(release)
	if err := f.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if cm, _ := rec.seen(ns + "/doomed"); cm == nil {
		t.Fatal("the first run delivered the deletion although its only worker was busy: the test shows nothing")
	}

	start(t, f, 1)
	controlplanetest.Eventually(t, 30*time.Second, "the handlers told of the deletion made before the stop", func() bool {
		cm, ok := rec.seen(ns + "/doomed")
		return ok && cm == nil
	})
}
