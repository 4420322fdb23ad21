package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// streamCall is one call of a handler, with whether the informer had
// synced when it was made.
type streamCall struct {
	key    string
	gone   bool // the handler was given nil: the object is gone
	synced bool
}

// TestWorkersStartWhileTheInitialListStreams: with StreamInitialList, a
// controller's workers start before its informer syncs, on the objects
// streamed so far: the handler runs before the sync. A key that misses
// before the sync (one another controller enqueued, for an object not
// listed yet or that does not exist) is never handed to the handlers as
// gone: it waits for the sync, and then its handlers are given the object,
// or nil if the complete list lacks it.
//
// The stream is held before its end (the bookmark) until the controller's
// handler has been given an object, so the informer cannot sync before;
// the keys enqueued before Start go first (High before the stream's
// initial-list keys, Low), so with one worker they were tried before the
// handler's first call, while the stream was held. (A handler of the
// informer cannot hold the stream: each is called by a goroutine of its
// own, and the list goes in once each has begun.)
func TestWorkersStartWhileTheInitialListStreams(t *testing.T) {
	t.Run("default", func(t *testing.T) { testWorkersStartWhileStreaming(t, false) })
	t.Run("compact", func(t *testing.T) { testWorkersStartWhileStreaming(t, true) })
}

func testWorkersStartWhileStreaming(t *testing.T, compact bool) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n = 20
	for i := range n {
		createCM(t, cp.Config(), ns, fmt.Sprintf("cm-%02d", i), nil)
	}
	createCM(t, cp.Config(), ns, "zz-last", nil)
	s := setup{}
	// The stream is held quiet below: not long enough to be taken for a
	// server that lacks watch-list, nor for the sync to time out.
	s.cacheOpts.Default = cache.Options{StreamInitialList: true, Compact: compact, InitialEventsTimeout: 5 * time.Minute}
	s.cacheOpts.SyncTimeout = 5 * time.Minute
	handled := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(handled) }) }) // a broken build does not hang
	heldFor := make(chan time.Duration, 1)
	hold := &streamHold{release: handled, held: heldFor}
	f := newFactory(t, hold.wrap(cp.Config()), ns, s)
	informer, err := f.SharedCacheFactory().ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		calls []streamCall
	)
	c := configMapController(t, f)
	c.RegisterHandler(t.Context(), "record", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		mu.Lock()
		calls = append(calls, streamCall{key: key, gone: obj == nil, synced: informer.HasSynced()})
		mu.Unlock()
		if obj != nil {
			once.Do(func() { close(handled) })
		}
		return nil, nil
	}))
	c.Enqueue(ns, "zz-last")
	c.Enqueue(ns, "absent")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	started := make(chan error, 1)
	go func() { started <- f.Start(ctx, 1) }() // Start waits for the sync
	controlplanetest.Eventually(t, 3*time.Minute, "the sync (its stream held until the handler was given an object)", informer.HasSynced)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "every key handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, call := range calls {
			seen[call.key] = true
		}
		return len(seen) == n+2
	})

	mu.Lock()
	defer mu.Unlock()
	first := calls[0]
	if first.synced || first.gone {
		held := "not held: no bookmark ended its initial events"
		select {
		case d := <-heldFor:
			held = "held " + d.String()
		default:
		}
		t.Errorf("first handler call %+v: want one given a streamed object before the sync (the stream was %s)", first, held)
	}
	for _, call := range calls {
		switch {
		case call.gone && !call.synced:
			t.Errorf("%s handed to the handler as gone before the sync: a miss before the sync is not a deletion", call.key)
		case call.key == ns+"/zz-last" && call.gone:
			t.Errorf("%s, which exists, handed to the handler as gone", call.key)
		case call.key == ns+"/absent" && !call.gone:
			t.Errorf("%s, which does not exist, handed to the handler as an object", call.key)
		}
	}
}
