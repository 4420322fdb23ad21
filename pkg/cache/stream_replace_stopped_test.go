package cache_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestStreamHandlerStoppedBeforeItsReplaceIsNotToldObjectsWentAway: a
// handler of a streaming cache is slow on its first object, so the
// informer syncs (the stream does not wait for the handler) before the
// handler was handed the informer's Replace, and the factory is stopped
// then (leadership lost). The objects it was given early and whose
// Replace it never saw still exist: the next run lists them again, and
// the handler must never be told that any of them went away.
func TestStreamHandlerStoppedBeforeItsReplaceIsNotToldObjectsWentAway(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n = 20
	createConfigMaps(t, ns, 0, n)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	inner := log.handler(informer)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	stuck := make(chan struct{})
	var first atomic.Bool
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if first.CompareAndSwap(false, true) {
				close(stuck)
				<-release // slow on its first object
			}
			inner.OnAdd(obj, initial)
		},
		UpdateFunc: inner.OnUpdate,
		DeleteFunc: inner.OnDelete,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("handler given %v", log.snapshot())
		}
	})
	ctx1, stop1 := context.WithCancel(t.Context())
	if err := f.Start(ctx1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck:
	case <-time.After(time.Minute):
		t.Fatal("the handler was never called")
	}
	controlplanetest.Eventually(t, time.Minute, "the informer synced while the handler is slow", informer.HasSynced)
	if reg.HasSynced() {
		t.Fatal("the handler was handed the Replace while stuck: the test shows nothing")
	}
	stop1() // leadership lost after the sync, before the handler's Replace
	free()
	startSynced(t, f) // leadership regained: the next run lists the same objects
	controlplanetest.Eventually(t, time.Minute, "the handler's registration synced in the next run", reg.HasSynced)
	for _, e := range log.snapshot() {
		if strings.HasPrefix(e, "delete ") {
			t.Fatalf("handler told %q, although all %d objects exist", e, n)
		}
	}
	added := 0
	for _, e := range log.snapshot() {
		if strings.HasPrefix(e, "add ") {
			added++
		}
	}
	if added != n {
		t.Errorf("handler given %d adds, want each of the %d objects once", added, n)
	}
}
