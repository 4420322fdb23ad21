package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestGateIsToldTheUIDOfTheAbsentObject: a Gate asked about an absent
// object learns, through controller.AbsentUID, the UID of the object the
// handlers were given under the key, so that an object created again
// under the name (another UID) is not taken for the one that went; a pass
// over a cached object carries none.
func TestGateIsToldTheUIDOfTheAbsentObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var mu sync.Mutex
	var absent, cached []types.UID
	gate := controller.GateFunc(func(ctx context.Context, _ string, obj runtime.Object) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if obj == nil {
			absent = append(absent, controller.AbsentUID(ctx))
		} else {
			cached = append(cached, controller.AbsentUID(ctx))
		}
		return true, nil
	})
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		KindGates: map[schema.GroupVersionKind]controller.Gate{configMapGVK: gate},
	}})
	_, rec := recordConfigMaps(t, f)
	start(t, f, 1)

	createCM(t, cp.Config(), ns, "held", nil)
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler given the object", func() bool { _, ok := rec.seen(ns + "/held"); return ok })
	if err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the gate asked about the absent object", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(absent) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for _, uid := range absent {
		if uid != cm.UID {
			t.Errorf("AbsentUID in a pass over the deleted object = %q, want the UID the handlers were given, %q", uid, cm.UID)
		}
	}
	for _, uid := range cached {
		if uid != "" {
			t.Errorf("AbsentUID in a pass over a cached object = %q, want none", uid)
		}
	}
}

// TestGateIsToldTheUIDTheCacheHadWhenNoPassGaveIt: an object the cache had
// but no pass gave to the handlers (here the gate kept the cached passes
// from them; a member's busy workers do the same) is still the one held:
// a pass over its absence carries the UID the cache had. Before,
// AbsentUID was empty, and pkg/shard's gate took an object created again
// under the name for the one held (adv10, taken-again).
func TestGateIsToldTheUIDTheCacheHadWhenNoPassGaveIt(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var mu sync.Mutex
	var absent []types.UID
	var cached bool
	gate := controller.GateFunc(func(ctx context.Context, _ string, obj runtime.Object) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if obj != nil {
			cached = true
			return false, nil // the handlers are never given it
		}
		absent = append(absent, controller.AbsentUID(ctx))
		return true, nil
	})
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		KindGates: map[schema.GroupVersionKind]controller.Gate{configMapGVK: gate},
	}})
	recordConfigMaps(t, f)
	start(t, f, 1)

	createCM(t, cp.Config(), ns, "unseen", nil)
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "unseen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "a pass over the cached object", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cached
	})
	if err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "unseen", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the gate asked about the absent object", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(absent) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for _, uid := range absent {
		if uid != cm.UID {
			t.Errorf("AbsentUID in a pass over the deleted object no pass gave the handlers = %q, want the UID the cache had, %q", uid, cm.UID)
		}
	}
}
