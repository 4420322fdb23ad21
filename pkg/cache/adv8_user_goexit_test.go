package cache_test

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv8ATransformThatCallsGoexitDoesNotFreezeTheCache (issue 30,
// h30g): a kind's Transform that ends its goroutine with runtime.Goexit
// (t.FailNow, require in a test's transform) is no panic: safeTransform's
// recover sees nothing, and the goroutine that called it, the
// informer's, ends for good. The cache then holds what it held: a
// ConfigMap created after the one the transform gave up on never
// reaches the store, and nothing says so.
func TestAdv8ATransformThatCallsGoexitDoesNotFreezeTheCache(t *testing.T) {
	adv8OpenDefect(t)
	var exits atomic.Int32
	transform := func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil && m.GetLabels()["goexit"] == "yes" && exits.Add(1) == 1 {
			runtime.Goexit()
		}
		return obj, nil
	}
	adv8GoexitKind(t, cache.KindOptions{Transform: transform}, &exits)
}

// TestAdv8AnIndexFuncThatCallsGoexitDoesNotFreezeTheCache (issue 30,
// h30g): the same for a kind's index function, which the store calls
// in the informer's goroutine that applies the queued changes.
func TestAdv8AnIndexFuncThatCallsGoexitDoesNotFreezeTheCache(t *testing.T) {
	adv8OpenDefect(t)
	var exits atomic.Int32
	index := func(obj any) ([]string, error) {
		if m, err := meta.Accessor(obj); err == nil && m.GetLabels()["goexit"] == "yes" && exits.Add(1) == 1 {
			runtime.Goexit()
		}
		return []string{"all"}, nil
	}
	adv8GoexitKind(t, cache.KindOptions{Indexers: toolscache.Indexers{"given": index}}, &exits)
}

// adv8GoexitKind runs a synced cache of ConfigMaps with opts, then
// creates bad (labelled goexit=yes: the user code under test calls
// runtime.Goexit on it, once) and then later, and waits for later in
// the store.
func adv8GoexitKind(t *testing.T, opts cache.KindOptions, exits *atomic.Int32) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "ok", nil)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: opts},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	applyConfigMap(t, ns, "bad", map[string]string{"goexit": "yes"})
	adv7Eventually(t, "the user code's Goexit on bad", func() bool { return exits.Load() >= 1 })
	applyConfigMap(t, ns, "later", nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, ok, err := informer.GetStore().GetByKey(ns + "/later")
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			_, hasBad, _ := informer.GetStore().GetByKey(ns + "/bad")
			t.Fatalf("20s after the user code called runtime.Goexit on bad (stored: %v), later, created after it, is not in the store (err %v)", hasBad, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// adv8OpenDefect skips a test of an open defect unless
// LARIAT_OPEN_DEFECTS=1.
func adv8OpenDefect(t *testing.T) {
	t.Helper()
	if os.Getenv("LARIAT_OPEN_DEFECTS") != "1" {
		t.Skip("open defect: set LARIAT_OPEN_DEFECTS=1 to run")
	}
}
