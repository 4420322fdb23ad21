package cache_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// uidLog records a handler's events with the objects' UIDs.
type uidLog struct {
	mu     sync.Mutex
	events []string
}

func (l *uidLog) add(event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event)
}

func (l *uidLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *uidLog) handler() toolscache.ResourceEventHandler {
	id := func(obj any) string {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		cm := obj.(*corev1.ConfigMap)
		return cm.Name + " " + string(cm.UID)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.add("add " + id(obj)) },
		UpdateFunc: func(old, obj any) { l.add("update " + id(old) + " -> " + id(obj)) },
		DeleteFunc: func(obj any) { l.add("delete " + id(obj)) },
	}
}

// TestAdv2StreamObjectDeletedAndCreatedAgainDuringTheStreamIsHandedAsDeleted:
// where the API server lacks watch-list, the stream of initial events is
// a plain watch, which passes on every change until the informer lists.
// An object handed early, then deleted and created again under the same
// name (another UID) while the stream runs, reaches the stream as a
// DELETED event and an ADDED one. The handler was told the first object
// exists; it must be told that object went away (docs: "an object handed
// early and deleted meanwhile is handed as deleted, once"), as client-go
// tells a handler of a watch's delete and add. Instead the stream hands
// the new object's add as an update of the old one (another UID), and the
// old one's deletion is never handed at all.
func TestAdv2StreamObjectDeletedAndCreatedAgainDuringTheStreamIsHandedAsDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 2)
	var hold atomic.Bool
	hold.Store(true)
	f := newCacheFactory(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &uidLog{}
	if _, err := informer.AddEventHandler(log.handler()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("handler given %v", log.snapshot())
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the stream's 2 objects handed early", func() bool {
		return len(log.snapshot()) == 2
	})
	cms := kube(t).CoreV1().ConfigMaps(ns)
	old, err := cms.Get(t.Context(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createConfigMaps(t, ns, 0, 1) // cm-0 again, another UID
	createConfigMaps(t, ns, 2, 3) // cm-2: the stream passed the above once it is handed
	controlplanetest.Eventually(t, time.Minute, "cm-2, created after cm-0 was created again, handed early", func() bool {
		return slices.ContainsFunc(log.snapshot(), func(e string) bool { return strings.HasPrefix(e, "add cm-2 ") })
	})
	if informer.HasSynced() {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
	want := fmt.Sprintf("delete cm-0 %s", old.UID)
	if !slices.Contains(log.snapshot(), want) {
		t.Errorf("the handler, handed cm-0 (%s) early, was not told it was deleted (%q) once the stream passed its deletion and its new object", old.UID, want)
	}
	for _, e := range log.snapshot() {
		if strings.HasPrefix(e, "update cm-0 "+string(old.UID)+" -> ") && !strings.HasSuffix(e, string(old.UID)) {
			t.Errorf("handler given %q: an update from one object to another", e)
		}
	}
}
