package generic_test

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestCacheGetWhileTheInitialListStreams: with StreamInitialList, a typed
// Get made before the sync answers for an object the stream already
// handed out, and a miss then is a NotSyncedError (the object may not be
// listed yet), never NotFound; after the sync a miss is NotFound.
func TestCacheGetWhileTheInitialListStreams(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactoryOf(t, cp.Config(), cache.Options{Namespace: ns, StreamInitialList: true}, controller.SharedControllerFactoryOptions{})
	cms := newConfigMaps(t, f)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	c := cms.Cache()
	var (
		once             sync.Once
		name             string
		hit              *corev1.ConfigMap
		hitErr, missErr  error
		syncedAtTheFirst bool
		called           = make(chan struct{})
	)
	// Called in the stream, before the informer can sync.
	_, err := cms.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		once.Do(func() {
			name = obj.(*corev1.ConfigMap).Name
			syncedAtTheFirst = cms.Informer().HasSynced()
			hit, hitErr = c.Get(ns, name)
			_, missErr = c.Get(ns, "absent")
			close(called)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	start(t, f)
	// The handler runs on the informer's goroutine: its results are read
	// once it has returned (the factory's sync does not wait for handlers).
	select {
	case <-called:
	case <-time.After(time.Minute):
		t.Fatal("no object of the stream reached the handler")
	}
	if syncedAtTheFirst {
		t.Fatal("the informer had synced at the first object of its stream")
	}
	if hitErr != nil || hit == nil || hit.Name != name {
		t.Errorf("Get of %s, streamed, before the sync: %v, %v; want the object", name, hit, hitErr)
	}
	if !cache.IsNotSynced(missErr) {
		t.Errorf("Get of an object not streamed, before the sync: %v; want a NotSyncedError", missErr)
	}
	controlplanetest.Eventually(t, time.Minute, "the sync", cms.Informer().HasSynced)
	if _, err := c.Get(ns, "absent"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an object that does not exist, after the sync: %v; want NotFound", err)
	}
}
