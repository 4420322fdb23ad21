package cache_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv7ATransformThatPanicsDoesNotKillTheProcess (issue 30): a kind's
// Transform is user code the informer calls on every object of its lists
// and watch events, in the reflector's goroutine, where a panic ends the
// process. Its panic is recovered: the object is stored as the server
// sent it, untransformed (a transform's error would make client-go drop
// the watch event, a deletion included, or fail the whole list), so the
// cache still syncs, holds every object, and sees the panicking object's
// update and deletion. Run in a child process so that a crash fails the
// test with its message.
func TestAdv7ATransformThatPanicsDoesNotKillTheProcess(t *testing.T) {
	adv7InChild(t, "TestAdv7ATransformThatPanicsDoesNotKillTheProcess", func(t *testing.T) {
		transform := func(obj any) (any, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return obj, nil
			}
			if m.GetLabels()["panic"] == "yes" {
				panic("the transform panics on this object")
			}
			m.SetAnnotations(map[string]string{"transformed": "yes"})
			return obj, nil
		}
		adv7PanickingKind(t, cache.KindOptions{Transform: transform}, func(t *testing.T, informer toolscache.SharedIndexInformer, ns string) {
			if a := adv7Object(t, informer, ns+"/ok").GetAnnotations(); a["transformed"] != "yes" {
				t.Errorf("ns/ok is not transformed: annotations %v", a)
			}
		})
	})
}

// TestAdv7AnIndexFuncThatPanicsDoesNotKillTheProcess (issue 30): a
// kind's index functions (KindOptions.Indexers, AddIndexers) are user
// code the informer's store calls on every object it stores, where a
// panic ends the process (client-go panics on an index function's error
// too). Its panic is recovered: the object is stored, under no value of
// that index, and the other objects are indexed.
func TestAdv7AnIndexFuncThatPanicsDoesNotKillTheProcess(t *testing.T) {
	adv7InChild(t, "TestAdv7AnIndexFuncThatPanicsDoesNotKillTheProcess", func(t *testing.T) {
		index := func(obj any) ([]string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, nil
			}
			if m.GetLabels()["panic"] == "yes" {
				panic("the index function panics on this object")
			}
			return []string{"all"}, nil
		}
		added := func(obj any) ([]string, error) {
			if m, err := meta.Accessor(obj); err == nil && m.GetLabels()["panic"] == "yes" {
				panic("the added index function panics on this object")
			}
			return []string{"all"}, nil
		}
		adv7PanickingKind(t, cache.KindOptions{Indexers: toolscache.Indexers{"given": index}}, func(t *testing.T, informer toolscache.SharedIndexInformer, ns string) {
			if err := informer.AddIndexers(toolscache.Indexers{"added": added}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"given", "added"} {
				objs, err := informer.GetIndexer().ByIndex(name, "all")
				if err != nil {
					t.Fatal(err)
				}
				if len(objs) != 1 {
					t.Errorf("index %s holds %d objects under \"all\", want ns/ok alone", name, len(objs))
				}
			}
		})
	})
}

// adv7PanickingKind runs a cache of ConfigMaps with opts over ConfigMaps
// ok and bad (labelled panic=yes: the user code under test panics on
// it), checks that both are stored, calls check, and then that bad's
// update and deletion reach the store.
func adv7PanickingKind(t *testing.T, opts cache.KindOptions, check func(*testing.T, toolscache.SharedIndexInformer, string)) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "ok", nil)
	applyConfigMap(t, ns, "bad", map[string]string{"panic": "yes"})
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: opts},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	adv7Object(t, informer, ns+"/bad")
	check(t, informer, ns)
	applyConfigMap(t, ns, "bad", map[string]string{"panic": "yes", "v": "2"})
	adv7Eventually(t, "bad's update in the store", func() bool {
		obj, ok, err := informer.GetStore().GetByKey(ns + "/bad")
		if err != nil || !ok {
			return false
		}
		m, err := meta.Accessor(obj)
		return err == nil && m.GetLabels()["v"] == "2"
	})
	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "bad", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	adv7Eventually(t, "bad's deletion in the store", func() bool {
		_, ok, err := informer.GetStore().GetByKey(ns + "/bad")
		return err == nil && !ok
	})
}

// adv7Object returns the stored object of key, failing the test when the
// store does not hold it.
func adv7Object(t *testing.T, informer toolscache.SharedIndexInformer, key string) metav1.Object {
	t.Helper()
	obj, ok, err := informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		t.Fatalf("the store does not hold %s (err %v)", key, err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// adv7Eventually polls cond until it holds, for long enough for a busy
// machine, and fails the test naming what it waited for.
func adv7Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute and still not: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// adv7InChild runs child in a child process of the test binary (with its
// own control plane), so that a panic that ends the process fails the
// test with the panic's first line rather than end the whole run.
func adv7InChild(t *testing.T, name string, child func(t *testing.T)) {
	t.Helper()
	if os.Getenv("LARIAT_ADV7_CHILD") == name {
		child(t)
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LARIAT_ADV7_CHILD="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := string(out)
		if i := strings.Index(first, "panic:"); i >= 0 {
			first, _, _ = strings.Cut(first[i:], "\n")
		}
		t.Fatalf("the child process failed (%v): %s", err, first)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child process did not run %s:\n%s", name, out)
	}
}
