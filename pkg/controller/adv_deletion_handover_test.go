package controller_test

import (
	"sync/atomic"
	"testing"
	"time"

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
	restartWhileTelling(t, c, caches, rec, ns, inPass)
	close(release)
	controlplanetest.Eventually(t, 30*time.Second, "the new run tells the handler doomed is gone", func() bool {
		return toldThrough.Load() >= 1
	})
	handleInTurn(t, c, rec, ns, "after-the-telling", "after-another-telling")
	if n := toldThrough.Load(); n != 1 {
		t.Fatalf("the handler saw doomed's deletion through %d times, want once; keys handled: %v", n, rec.order())
	}
}
