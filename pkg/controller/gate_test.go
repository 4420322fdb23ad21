package controller_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// gateLog records the keys a gate was asked about, in order.
type gateLog struct {
	mu   sync.Mutex
	keys []string
	objs []runtime.Object
}

func (g *gateLog) add(key string, obj runtime.Object) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.keys = append(g.keys, key)
	g.objs = append(g.objs, obj)
	n := 0
	for _, k := range g.keys {
		if k == key {
			n++
		}
	}
	return n
}

func (g *gateLog) count(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(slices.DeleteFunc(slices.Clone(g.keys), func(k string) bool { return k != key }))
}

func TestGateSkipsHandlers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var log gateLog
	gate := controller.GateFunc(func(_ context.Context, key string, obj runtime.Object) (bool, error) {
		log.add(key, obj)
		return key != ns+"/skipped", nil
	})
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		KindGates: map[schema.GroupVersionKind]controller.Gate{configMapGVK: gate},
	}})
	c, rec := recordConfigMaps(t, f)
	start(t, f, 2)

	createCM(t, cp.Config(), ns, "skipped", nil)
	createCM(t, cp.Config(), ns, "handled", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handled key to reach the handler", func() bool { _, ok := rec.seen(ns + "/handled"); return ok })
	controlplanetest.Eventually(t, 30*time.Second, "the gate to see the skipped key", func() bool { return log.count(ns+"/skipped") > 0 })
	// Requeue the skipped key: every pass goes through the gate.
	c.Enqueue(ns, "skipped")
	controlplanetest.Eventually(t, 30*time.Second, "the gate to see the requeued key", func() bool { return log.count(ns+"/skipped") > 1 })
	if _, ok := rec.seen(ns + "/skipped"); ok {
		t.Fatalf("the handler ran for a key its gate skipped; handler saw %v", rec.order())
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for i, k := range log.keys {
		if cm, ok := log.objs[i].(*corev1.ConfigMap); !ok || ns+"/"+cm.Name != k {
			t.Errorf("gate pass %d for %s got %T %v, want the cached ConfigMap", i, k, log.objs[i], log.objs[i])
		}
	}
}

func TestGateErrorRetries(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var log gateLog
	const failures = 3
	gate := controller.GateFunc(func(_ context.Context, key string, obj runtime.Object) (bool, error) {
		if n := log.add(key, obj); n <= failures {
			return false, errors.New("not yet")
		}
		return true, nil
	})
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Backoff:   controller.Backoff{Base: 10 * time.Millisecond, Max: time.Second},
		KindGates: map[schema.GroupVersionKind]controller.Gate{configMapGVK: gate},
	}})
	c := configMapController(t, f)
	rec := newRecorder()
	var gateCallsAtHandler int
	c.RegisterHandler(t.Context(), "record", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		gateCallsAtHandler = log.count(key)
		return rec.OnChange(key, obj)
	}))
	start(t, f, 1)

	key := ns + "/retried"
	createCM(t, cp.Config(), ns, "retried", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handler to run after the gate stopped failing", func() bool { _, ok := rec.seen(key); return ok })
	if gateCallsAtHandler != failures+1 {
		t.Fatalf("the handler ran after %d gate passes, want %d (%d failures, then admitted)", gateCallsAtHandler, failures+1, failures)
	}
}
