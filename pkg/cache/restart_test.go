package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// events records what an informer handler was told, by name.
type events struct {
	mu  sync.Mutex
	got map[string][]string
}

func (e *events) record(kind string, obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	name := obj.(metav1.Object).GetName()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got[name] = append(e.got[name], kind)
}

func (e *events) saw(name, kind string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.got[name] {
		if k == kind {
			return true
		}
	}
	return false
}

// TestStartAgainRelistsAndKeepsHandlers: a cache factory whose context
// ended starts again with a new one. Its informers (the same values handed
// out before) list again: a handler added before the first start is told
// about an object deleted while stopped, one created while stopped, and one
// created after the restart, and reads see the new state. Indexers added
// in the first run still work.
func TestStartAgainRelistsAndKeepsHandlers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "doomed", map[string]string{"color": "blue"})
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{got: map[string][]string{}}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { ev.record("add", obj) },
		UpdateFunc: func(_, obj any) { ev.record("update", obj) },
		DeleteFunc: func(obj any) { ev.record("delete", obj) },
	})
	if err != nil {
		t.Fatal(err)
	}
	first, cancel := context.WithCancel(context.Background())
	if err := f.Start(first); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WaitForCacheSync(first); err != nil {
		t.Fatal(err)
	}
	err = informer.AddIndexers(toolscache.Indexers{"color": func(obj any) ([]string, error) {
		return []string{obj.(metav1.Object).GetLabels()["color"]}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Until the first run has stopped it could itself deliver the changes
	// below, and the test would pass without the restart's re-list.
	deadline := time.Now().Add(30 * time.Second)
	for !informer.IsStopped() {
		if time.Now().After(deadline) {
			t.Fatal("the first run did not stop after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	applyConfigMap(t, ns, "while-stopped", map[string]string{"color": "blue"})
	startAndSync(t, f)
	applyConfigMap(t, ns, "after", nil)

	deadline = time.Now().Add(30 * time.Second)
	for !(ev.saw("doomed", "delete") && ev.saw("while-stopped", "add") && ev.saw("after", "add")) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the handler was told %v; want doomed deleted, while-stopped and after added", ev.got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok, _ := informer.GetStore().GetByKey(ns + "/doomed"); ok {
		t.Error("the restarted cache still holds an object deleted while stopped")
	}
	blue, err := informer.GetIndexer().ByIndex("color", "blue")
	if err != nil || len(blue) != 1 || blue[0].(metav1.Object).GetName() != "while-stopped" {
		t.Errorf("an indexer added in the first run does not serve the second: %v, %v", blue, err)
	}
}
