package cache_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv3CompactIndexersDoNotGrowAcrossRestarts: a compact cache wraps
// each index function so that it is given decoded objects. A restart of
// the factory (a replica that regains leadership) rebuilds the informer
// from the stopped one's indexers, which are wrapped already, and wraps
// them again: every restart adds a layer to every index call, kept for
// the life of the process.
func TestAdv3CompactIndexersDoNotGrowAcrossRestarts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var mu sync.Mutex
	depth := 0
	byName := func(obj any) ([]string, error) {
		pcs := make([]uintptr, 512)
		mu.Lock()
		depth = runtime.Callers(0, pcs)
		mu.Unlock()
		key, err := toolscache.MetaNamespaceKeyFunc(obj)
		return []string{key}, err
	}
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, Indexers: toolscache.Indexers{"byName": byName}},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {Compact: ptr.To(true)}},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	var depths []int
	for run := range 4 {
		ctx, cancel := context.WithCancel(t.Context())
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
		syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
		if _, err := f.WaitForCacheSync(syncCtx); err != nil {
			t.Fatal(err)
		}
		cancelSync()
		name := fmt.Sprintf("cm-%d", run)
		applyConfigMap(t, ns, name, nil)
		controlplanetest.Eventually(t, time.Minute, name+" indexed", func() bool {
			keys, err := informer.GetIndexer().IndexKeys("byName", ns+"/"+name)
			return err == nil && len(keys) == 1
		})
		mu.Lock()
		depths = append(depths, depth)
		mu.Unlock()
		cancel()
		controlplanetest.Eventually(t, time.Minute, "the informer stopped", informer.IsStopped)
	}
	if depths[len(depths)-1] != depths[0] {
		t.Errorf("an index call's stack depth in each of 4 runs of the factory: %v; it grows with every restart", depths)
	}
}
