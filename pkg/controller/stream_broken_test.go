package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestABrokenStreamsObjectIsToldGoneNeverPassedAsCurrent: a controller's
// workers start while its informer streams its first list. The stream
// hands out cm-0 (the handler is given it), cm-0 is deleted, and the
// stream breaks; the reflector's next stream lists cm-1 and cm-2 but not
// cm-0, and is held before its end. A pass of cm-0 then (a key queued by
// Enqueue, or another controller) must not hand the handler the broken
// stream's cm-0 as current: nothing keeps it current, and it is gone. The
// pass waits for the sync, and the handler is told cm-0 is gone once the
// complete list says so (never lost).
func TestABrokenStreamsObjectIsToldGoneNeverPassedAsCurrent(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		createCM(t, cp.Config(), ns, fmt.Sprintf("cm-%d", i), nil)
	}
	release, breakNow := make(chan struct{}), make(chan struct{})
	var released, broken sync.Once
	t.Cleanup(func() { broken.Do(func() { close(breakNow) }) })
	t.Cleanup(func() { released.Do(func() { close(release) }) })
	hold := &streamHold{release: release, cut: "cm-0", breakNow: breakNow}
	s := setup{}
	// The second stream is held quiet: not long enough to be taken for a
	// server that lacks watch-list, nor for the sync to time out.
	s.cacheOpts.Default = cache.Options{StreamInitialList: true, InitialEventsTimeout: 5 * time.Minute}
	s.cacheOpts.SyncTimeout = 5 * time.Minute
	f := newFactory(t, hold.wrap(cp.Config()), ns, s)
	informer, err := f.SharedCacheFactory().ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		calls []streamCall
	)
	snapshot := func() []streamCall {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
	called := func(key string, gone bool) func() bool {
		return func() bool {
			return slices.ContainsFunc(snapshot(), func(c streamCall) bool { return c.key == ns+"/"+key && c.gone == gone })
		}
	}
	c := configMapController(t, f)
	c.RegisterHandler(t.Context(), "record", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		mu.Lock()
		calls = append(calls, streamCall{key: key, gone: obj == nil, synced: informer.HasSynced()})
		mu.Unlock()
		return nil, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	started := make(chan error, 1)
	go func() { started <- f.Start(ctx, 1) }() // Start waits for the sync

	controlplanetest.Eventually(t, time.Minute, "cm-0 given to the handler from the first stream", called("cm-0", false))
	if err := kube(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	broken.Do(func() { close(breakNow) })
	controlplanetest.Eventually(t, time.Minute, "cm-1 and cm-2 given to the handler from the second stream", func() bool {
		return called("cm-1", false)() && called("cm-2", false)()
	})
	if hold.streams.Load() < 2 || informer.HasSynced() {
		t.Fatalf("%d streams, synced %t: want the second stream held before its end", hold.streams.Load(), informer.HasSynced())
	}
	// One worker takes the keys in the order they were queued: once the
	// handler is given cm-2 again, the pass of cm-0 has read.
	before := len(snapshot())
	c.Enqueue(ns, "cm-0")
	c.Enqueue(ns, "cm-2")
	controlplanetest.Eventually(t, time.Minute, "the pass of cm-0, then cm-2 again", func() bool {
		return slices.ContainsFunc(snapshot()[before:], func(c streamCall) bool { return c.key == ns+"/cm-2" })
	})
	if informer.HasSynced() {
		t.Fatal("synced while the second stream's end was held: the test shows nothing")
	}
	released.Do(func() { close(release) })
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the handler told cm-0 is gone", called("cm-0", true))

	all := snapshot()
	for _, call := range all[before:] {
		if call.key == ns+"/cm-0" && !call.gone {
			t.Errorf("after the stream broke, cm-0 (deleted, and lacking from the stream listing again) handed to the handler as current (synced %t); calls %+v", call.synced, all)
		}
	}
	for _, call := range all {
		if call.gone && !call.synced {
			t.Errorf("%s handed to the handler as gone before the sync: a miss before the sync is not a deletion; calls %+v", call.key, all)
		}
	}
}
