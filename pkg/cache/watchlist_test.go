package cache_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// withoutWatchList is controlplanetest.WithoutWatchList for every stream,
// counting in streams the requests that asked for one.
func withoutWatchList(cfg *rest.Config, streams *atomic.Int64) *rest.Config {
	return controlplanetest.WithoutWatchList(cfg, func() bool {
		streams.Add(1)
		return true
	})
}

// createConfigMaps creates cm-<from> to cm-<to-1>.
func createConfigMaps(t *testing.T, ns string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := kube(t).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncsWhereTheServerLacksWatchList: an API server that ignores
// sendInitialEvents never ends the stream with the initial-events-end
// bookmark, and client-go's reflector waits for it until the watch times
// out, then asks again. The kind must sync anyway (by listing), and stay
// current.
func TestSyncsWhereTheServerLacksWatchList(t *testing.T) {
	var streams atomic.Int64
	f, stop := syncWithoutWatchList(t, cache.Options{InitialEventsTimeout: 2 * time.Second}, &streams)
	asked := streams.Load()
	if asked == 0 {
		t.Fatal("no stream of initial events was asked for: the test shows nothing")
	}
	// The kind lists from now on: restarted (as a replica regaining
	// leadership), its rebuilt informer asks for no stream, and syncs.
	stop()
	startSynced(t, f)
	if n := streams.Load(); n != asked {
		t.Errorf("%d more streams of initial events asked for after the kind was found to lack them", n-asked)
	}
}

// TestNoWatchListOptOut: a kind told that its server lacks watch-list
// never asks for a stream of initial events.
func TestNoWatchListOptOut(t *testing.T) {
	var streams atomic.Int64
	_, _ = syncWithoutWatchList(t, cache.Options{NoWatchList: true}, &streams)
	if n := streams.Load(); n != 0 {
		t.Errorf("%d streams of initial events asked for, want none", n)
	}
}

// syncWithoutWatchList starts an informer of ConfigMaps with opts through
// withoutWatchList, waits for it to sync, and checks that it holds the
// namespace's ConfigMaps and then sees a new one.
func syncWithoutWatchList(t *testing.T, opts cache.Options, streams *atomic.Int64) (*cache.SharedCacheFactory, context.CancelFunc) {
	t.Helper()
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 3)
	opts.Namespace = ns
	f := newCacheFactory(t, withoutWatchList(cp.Config(), streams), &cache.SharedCacheFactoryOptions{Default: opts})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	stop := startSynced(t, f)
	if got := len(informer.GetStore().ListKeys()); got != 3 {
		t.Errorf("cache has %d configmaps, want 3", got)
	}
	// Watched after the list: a new object arrives.
	createConfigMaps(t, ns, 3, 4)
	controlplanetest.Eventually(t, time.Minute, "the configmap created after the sync in the cache", func() bool {
		_, ok, _ := informer.GetStore().GetByKey(ns + "/cm-3")
		return ok
	})
	return f, stop
}

// startSynced starts f and waits for its kinds to sync; the function it
// returns stops f.
func startSynced(t *testing.T, f *cache.SharedCacheFactory) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
	defer cancelSync()
	synced, err := f.WaitForCacheSync(syncCtx)
	if err != nil || len(synced) == 0 {
		t.Fatalf("not synced (%v): %v", synced, err)
	}
	for gvk, ok := range synced {
		if !ok {
			t.Fatalf("%s not synced", gvk)
		}
	}
	return cancel
}
