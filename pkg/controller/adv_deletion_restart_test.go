package controller_test

import (
	"sync/atomic"
	"testing"

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
	restartWhileTelling(t, c, caches, rec, ns, inPass)
	close(release)
	waitClosed(t, returned, "the last run's handler returns")
	// One worker, FIFO within a priority: the key the last run's pass
	// hands back when it ends is handled before the second of these
	// (the first covers the few statements between the handler's return
	// and that hand-back).
	handleInTurn(t, c, rec, ns, "after-the-pass", "after-the-hand-back")
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}
