package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv2StreamRemovedHandlerIsNotCalledAgain: client-go drops a removed
// handler's pending events, so once RemoveEventHandler has returned, a
// handler finishes at most the call it is in and is not called again (its
// listener's queue closes). StreamInitialList's docs say the same of the
// stream's queue ("client-go drops a removed handler's pending events
// too"). Here a slow handler is removed while stuck in a call of the
// stream, with the stream held open before its end (a server without
// watch-list), so that the informer has not synced and hands it nothing
// itself: the objects the stream had queued for it by then must not reach
// it. Instead its goroutine hands it the rest of the batch it had taken
// from the queue, after the removal. (The handler is held first in its
// first call while every object streams in and ten more are created, so
// that the batch its goroutine takes next holds those ten; it is removed
// while stuck in the first of them.)
func TestAdv2StreamRemovedHandlerIsNotCalledAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n, late = 40, 10
	createConfigMaps(t, ns, 0, n)
	var hold atomic.Bool
	hold.Store(true)
	f := newCacheFactory(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	release1, release2 := make(chan struct{}), make(chan struct{})
	var once1, once2 sync.Once
	t.Cleanup(func() {
		once1.Do(func() { close(release1) })
		once2.Do(func() { close(release2) })
	})
	stuck1, stuck2, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var calls, afterRemoval atomic.Int32
	var removed atomic.Bool
	firstLate := fmt.Sprintf("cm-%d", n)
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if removed.Load() {
			afterRemoval.Add(1)
		}
		if calls.Add(1) == 1 {
			close(stuck1)
			<-release1
		}
		if obj.(*corev1.ConfigMap).Name == firstLate {
			close(stuck2)
			<-release2
			close(done)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var other atomic.Int32
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { other.Add(1) }}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(time.Minute):
			t.Fatal(what)
		}
	}
	wait(stuck1, "the handler was never called")
	createConfigMaps(t, ns, n, n+late)
	controlplanetest.Eventually(t, time.Minute, "every object streamed (the other handler given them all)", func() bool {
		return other.Load() == n+late
	})
	once1.Do(func() { close(release1) })
	wait(stuck2, "the handler was never given "+firstLate)
	removed.Store(true)
	if err := informer.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	once2.Do(func() { close(release2) })
	wait(done, "the call in flight at the removal never returned")
	// One more object, streamed after the removal: once the other handler
	// has it, the removed handler's goroutine has had as long to go on.
	createConfigMaps(t, ns, n+late, n+late+1)
	controlplanetest.Eventually(t, time.Minute, "an object created after the removal handed to the other handler", func() bool {
		return other.Load() == n+late+1
	})
	if informer.HasSynced() {
		t.Fatal("synced while the stream was held: the informer may have called the handler itself")
	}
	if got := afterRemoval.Load(); got > 0 {
		t.Errorf("the handler was called %d times after RemoveEventHandler returned (%d in all, of %d objects)", got, calls.Load(), n+late+1)
	}
}
