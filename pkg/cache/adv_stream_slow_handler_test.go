package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdvStreamSlowHandlerDoesNotHoldUpTheInformer: client-go hands each
// handler its events through a queue of its own, so a handler that is
// slow (here: stuck in its first call) holds up only itself; the informer
// still lists, syncs and serves reads, and the other handlers get their
// events. The same must hold with StreamInitialList. Before the fix the
// stream handed each object to every handler in turn, in the stream's
// goroutine, before passing it on to the reflector: one stuck handler
// stopped the stream, so the informer never synced, every read of its
// cache failed, and the other handlers got nothing more.
func TestAdvStreamSlowHandlerDoesNotHoldUpTheInformer(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n = 3
	createConfigMaps(t, ns, 0, n)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	stuck := make(chan struct{}, 1)
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release // a slow handler: stuck until the test ends
	}})
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	if _, err := informer.AddEventHandler(log.handler(informer)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the other handler was given %v", log.snapshot())
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck:
	case <-time.After(time.Minute):
		t.Fatal("the slow handler was never called")
	}
	controlplanetest.Eventually(t, time.Minute, "the informer synced, and the other handler given every object, while one handler is slow", func() bool {
		return informer.HasSynced() && len(log.snapshot()) == n
	})
}
