package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestOnRelistedSeesTheWholeNewList: a handler that must see every
// object's end (package controller) compares what it was told with the
// store after a rebuild; OnRelisted is when it may: it is not called for
// the first run, and after a restart only once the store holds the new
// list (here: without an object deleted while stopped, with one created
// then).
func TestOnRelistedSeesTheWholeNewList(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "doomed", nil)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	notifier, ok := informer.(cache.RelistNotifier)
	if !ok {
		t.Fatalf("the factory's informer (%T) is not a RelistNotifier", informer)
	}
	var mu sync.Mutex
	var seen [][2]bool // per call: store has doomed, store has born
	remove := notifier.OnRelisted(func() {
		_, doomed, _ := informer.GetStore().GetByKey(ns + "/doomed")
		_, born, _ := informer.GetStore().GetByKey(ns + "/born")
		mu.Lock()
		seen = append(seen, [2]bool{doomed, born})
		mu.Unlock()
	})
	defer remove()
	calls := func() [][2]bool {
		mu.Lock()
		defer mu.Unlock()
		return append([][2]bool(nil), seen...)
	}

	first, cancel := context.WithCancel(context.Background())
	if err := f.Start(first); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WaitForCacheSync(first); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := f.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 0 {
		t.Fatalf("OnRelisted called for the first run: %v", got)
	}
	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	applyConfigMap(t, ns, "born", nil)
	startAndSync(t, f)
	controlplanetest.Eventually(t, 30*time.Second, "OnRelisted called after the restart", func() bool { return len(calls()) > 0 })
	if got := calls(); len(got) != 1 || got[0] != [2]bool{false, true} {
		t.Errorf("OnRelisted saw the store [has doomed, has born] = %v; want one call with [false true]: the whole new list", got)
	}
}
