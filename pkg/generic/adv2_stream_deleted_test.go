package generic_test

import (
	"context"
	"sync"
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

// TestAdv2StreamGetDoesNotAnswerWithAnObjectItsStreamSawDeleted: where
// the API server lacks watch-list, a streaming cache's first list is a
// plain watch until the informer lists: the objects, then every change.
// A typed Get before the sync answers for an object already streamed; but
// once the same stream has passed that object's deletion (and, after it,
// another object's creation, which the handlers were handed), the Get
// still returns the deleted object, where it must say it cannot tell (a
// NotSyncedError) or that the object is gone. A handler acting on it
// before the sync acts on an object that no longer exists.
func TestAdv2StreamGetDoesNotAnswerWithAnObjectItsStreamSawDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "a")
	var hold atomic.Bool
	hold.Store(true)
	f := newFactoryOf(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load),
		cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
		controller.SharedControllerFactoryOptions{})
	cms := newConfigMaps(t, f)
	var mu sync.Mutex
	streamed := map[string]bool{}
	_, err := cms.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		streamed[obj.(*corev1.ConfigMap).Name] = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	// The caches alone: the factory's Start waits for the sync.
	if err := f.ControllerFactory().SharedCacheFactory().Start(ctx); err != nil {
		t.Fatal(err)
	}
	handed := func(name string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return streamed[name]
		}
	}
	eventually(t, "a handed out by the stream", handed("a"))
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "b") // the stream passed a's deletion once b is handed
	eventually(t, "b, created after a was deleted, handed out by the stream", handed("b"))
	if cms.Informer().HasSynced() {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
	if got, err := cms.Cache().Get(ns, "a"); err == nil {
		t.Errorf("Get of a before the sync, its deletion streamed: %s/%s (resourceVersion %s), <nil>; want a NotSyncedError or NotFound", got.Namespace, got.Name, got.ResourceVersion)
	}
}
