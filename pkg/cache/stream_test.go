package cache_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// streamLog records what a handler was given, and what the informer's
// store and sync state were when it was first called.
type streamLog struct {
	mu     sync.Mutex
	events []string // "add <name> <initial>", "update <name>", "delete <name>"
	// At the first call: how many objects the store held, whether the
	// informer had synced and what a read of a typed cache would say.
	firstStored  int
	firstSynced  bool
	firstSyncErr error
	// What GetStreamed said at the first call of the object handed then
	// and of one that does not exist.
	firstStreamed, firstAbsent streamedRead
	called                     bool
}

// streamedRead is a GetStreamed answer.
type streamedRead struct {
	found, exists, synced bool
	err                   error
}

func readStreamed(informer toolscache.SharedIndexInformer, key string) streamedRead {
	r, ok := informer.(cache.StreamReader)
	if !ok {
		return streamedRead{err: fmt.Errorf("%T is no StreamReader", informer)}
	}
	obj, exists, synced, err := r.GetStreamed(key)
	_, isCM := obj.(*corev1.ConfigMap)
	return streamedRead{found: isCM, exists: exists, synced: synced, err: err}
}

func (l *streamLog) handler(informer toolscache.SharedIndexInformer) toolscache.ResourceEventHandler {
	record := func(event string, obj any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.called {
			l.called = true
			l.firstStored = len(informer.GetStore().ListKeys())
			l.firstSynced = informer.HasSynced()
			l.firstSyncErr = cache.CheckSynced(informer, schema.GroupResource{Resource: "configmaps"})
			if key, err := toolscache.MetaNamespaceKeyFunc(obj); err == nil {
				l.firstStreamed = readStreamed(informer, key)
				l.firstAbsent = readStreamed(informer, key+"-absent")
			}
		}
		l.events = append(l.events, event)
	}
	name := func(obj any) string {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		return obj.(*corev1.ConfigMap).Name
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { record(fmt.Sprintf("add %s %t", name(obj), initial), obj) },
		UpdateFunc: func(_, obj any) { record("update "+name(obj), obj) },
		DeleteFunc: func(obj any) { record("delete "+name(obj), obj) },
	}
}

func (l *streamLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// TestStreamInitialListFeedsHandlersBeforeTheListIsIn: with
// StreamInitialList, a handler is given the first objects of the initial
// list while the rest stream in, that is before the informer's store holds
// any of them (client-go hands the handler nothing until the whole list is
// stored), and yet the informer has not synced and a read of its cache
// says so. Each object is given once (an add of the initial list), and
// changes after the sync come as changes.
//
// A compact cache (objects stored encoded) streams the same way: its
// handlers are given decoded objects, early and after.
func TestStreamInitialListFeedsHandlersBeforeTheListIsIn(t *testing.T) {
	t.Run("default", func(t *testing.T) { testStreamInitialList(t, false) })
	t.Run("compact", func(t *testing.T) { testStreamInitialList(t, true) })
}

func testStreamInitialList(t *testing.T, compact bool) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n = 30
	createConfigMaps(t, ns, 0, n)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, Compact: compact},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	reg, err := informer.AddEventHandler(log.handler(informer))
	if err != nil {
		t.Fatal(err)
	}
	startSynced(t, f)
	// The informer syncs without waiting for a handler's goroutine to
	// hand over what the stream queued: the handler holds the whole list
	// once its registration has synced.
	controlplanetest.Eventually(t, time.Minute, "the handler's registration synced", reg.HasSynced)

	log.mu.Lock()
	stored, synced, syncErr := log.firstStored, log.firstSynced, log.firstSyncErr
	log.mu.Unlock()
	if stored != 0 || synced {
		t.Errorf("first handler call with %d objects stored (synced %t): want it before the list is stored", stored, synced)
	}
	if !cache.IsNotSynced(syncErr) {
		t.Errorf("a read of the cache at the first handler call: %v, want a NotSyncedError", syncErr)
	}
	// GetStreamed answers for what was streamed, and for nothing else
	// before the sync (a miss then is not "it does not exist").
	log.mu.Lock()
	streamed, absent := log.firstStreamed, log.firstAbsent
	log.mu.Unlock()
	if want := (streamedRead{found: true, exists: true}); streamed != want {
		t.Errorf("GetStreamed of the object handed at the first call: %+v, want %+v", streamed, want)
	}
	if absent != (streamedRead{}) {
		t.Errorf("GetStreamed of an object not streamed, at the first call: %+v, want a miss, not synced", absent)
	}
	if got := readStreamed(informer, ns+"/cm-0"); got != (streamedRead{found: true, exists: true, synced: true}) {
		t.Errorf("GetStreamed after the sync: %+v, want the object, from the synced store", got)
	}
	if got := readStreamed(informer, ns+"/absent"); got != (streamedRead{synced: true}) {
		t.Errorf("GetStreamed of an object that does not exist, after the sync: %+v, want a miss, synced", got)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("add cm-%d true", i))
	}
	if got := log.snapshot(); !sameEvents(got, want) {
		t.Errorf("handler given %v\nwant each object once: %v", got, want)
	}
	if got := len(informer.GetStore().ListKeys()); got != n {
		t.Errorf("store holds %d objects after sync, want %d", got, n)
	}

	// After the sync, a change is a change.
	cm, err := kube(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"k": "changed"}
	if _, err := kube(t).CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the update handed to the handler", func() bool {
		return slices.Contains(log.snapshot(), "update cm-0")
	})
	if got := log.snapshot(); len(got) != n+1 {
		t.Errorf("handler given %v, want the %d adds and one update", got, n)
	}
}

// TestStreamInitialListWhereTheServerLacksWatchList: a server that never
// ends the stream with its bookmark is listed instead, after the stream's
// objects were handed early. The list hands none of them again, and an
// object deleted meanwhile (before or after the list: either way) is
// handed as deleted, once.
func TestStreamInitialListWhereTheServerLacksWatchList(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 3)
	var streams atomic.Int64
	f := newCacheFactory(t, withoutWatchList(cp.Config(), &streams), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: 2 * time.Second},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	if _, err := informer.AddEventHandler(log.handler(informer)); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the stream's objects handed before the sync", func() bool {
		return len(log.snapshot()) == 3
	})
	log.mu.Lock()
	stored, synced := log.firstStored, log.firstSynced
	log.mu.Unlock()
	if stored != 0 || synced {
		t.Errorf("first handler call with %d objects stored (synced %t): want it while the stream streams", stored, synced)
	}
	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "synced and the delete handed", func() bool {
		return informer.HasSynced() && slices.Contains(log.snapshot(), "delete cm-0")
	})
	want := []string{"add cm-0 true", "add cm-1 true", "add cm-2 true", "delete cm-0"}
	if got := log.snapshot(); !slices.Equal(got, want) {
		t.Errorf("handler given %v, want %v", got, want)
	}
	if streams.Load() == 0 {
		t.Error("no stream of initial events was asked for: the test shows nothing")
	}
}

// TestStreamInitialListNeedsAFactory: a bare informer cannot wrap its
// handlers, so it refuses the option.
func TestStreamInitialListNeedsAFactory(t *testing.T) {
	_, err := cache.NewInformer(&corev1.ConfigMap{}, &corev1.ConfigMapList{}, nil, cache.Options{StreamInitialList: true})
	if err == nil {
		t.Fatal("NewInformer accepted StreamInitialList")
	}
}

// sameEvents reports whether got and want hold the same events, in any
// order.
func sameEvents(got, want []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}
