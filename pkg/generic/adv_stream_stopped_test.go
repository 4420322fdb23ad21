package generic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdvStreamStoppedCacheDoesNotAnswerWithStreamedObjects: a replica
// loses leadership while its first list streams (its factory is stopped
// before the sync). Its cache no longer runs: nothing keeps it current,
// and a read must fail with a NotSyncedError (NewInformerCache: "while it
// is not running, reads fail"), as it does for a cache that does not
// stream. Before the fix a streaming cache answered a Get with the object
// its stream handed out before the stop, although that object had been
// deleted since: a handler still finishing its pass in the stopped run
// acted on an object that no longer exists.
func TestAdvStreamStoppedCacheDoesNotAnswerWithStreamedObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "a")
	var hold atomic.Bool
	hold.Store(true)
	f := newFactoryOf(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load),
		cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
		controller.SharedControllerFactoryOptions{})
	cms := newConfigMaps(t, f)
	var streamed atomic.Bool
	_, err := cms.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if obj.(*corev1.ConfigMap).Name == "a" {
			streamed.Store(true)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	// The caches alone: the factory's Start waits for the sync.
	if err := f.ControllerFactory().SharedCacheFactory().Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a handed out by the stream", streamed.Load)
	if cms.Informer().HasSynced() {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
	stop() // leadership lost before the sync
	eventually(t, "the informer stopped", cms.Informer().IsStopped)
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Cache().Get(ns, "a")
	if !cache.IsNotSynced(err) {
		t.Errorf("Get of a (deleted) from the stopped cache: %v, %v; want a NotSyncedError", got, err)
	}
	if _, err := cms.Cache().List(ns, nil); !cache.IsNotSynced(err) {
		t.Errorf("List of the stopped cache: %v; want a NotSyncedError", err)
	}
}
