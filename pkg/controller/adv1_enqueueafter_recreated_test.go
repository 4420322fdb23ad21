package controller_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// forgetHook is a rate limiter that never delays and, once armed, runs
// hook (once) when the queue forgets key: the controller forgets a key's
// retries after a pass succeeded and before the pass ends (its Done), so
// hook runs in the window between the two.
type forgetHook struct {
	key   string
	armed atomic.Bool
	hook  func()
}

func (f *forgetHook) When(string) time.Duration { return time.Millisecond }
func (f *forgetHook) NumRequeues(string) int    { return 0 }
func (f *forgetHook) Forget(key string) {
	if key == f.key && f.armed.CompareAndSwap(true, false) {
		f.hook()
	}
}

// TestAdv1EnqueueAfterOfAnObjectCreatedAgainBeforeTheDeletionPassEndsIsKept:
// the pass telling the handlers that "phoenix" is gone has returned (its
// handler succeeded, the known key was forgotten) but not ended yet; in
// that window the object is created again under the same name (the cache
// has it) and an EnqueueAfter of it is issued. The pass drops the key's
// pending delayed adds when it forgets the key (ended), before this
// window, so the EnqueueAfter stands and the new object is handled twice.
// A change tried in issue 30 (166c08b, not merged) moved the cancel to the
// pass's end (DoneTicketCancelAfter), which dropped this request too: the
// handler saw the new object once. A controller of New with one handler
// (the fast path) and a factory's shared controller alike.
func TestAdv1EnqueueAfterOfAnObjectCreatedAgainBeforeTheDeletionPassEndsIsKept(t *testing.T) {
	t.Run("New", func(t *testing.T) {
		enqueueAfterOfARecreatedObject(t, func(t *testing.T, f *controller.SharedControllerFactory, informer toolscache.SharedIndexInformer, h controller.HandlerFunc, l *forgetHook) controller.Controller {
			c, err := controller.New("phoenix", informer, h, &controller.Options{Logger: controlplanetest.QuietLogger(), RateLimiter: l})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
	t.Run("SharedFactory", func(t *testing.T) {
		enqueueAfterOfARecreatedObject(t, func(t *testing.T, f *controller.SharedControllerFactory, _ toolscache.SharedIndexInformer, h controller.HandlerFunc, _ *forgetHook) controller.Controller {
			sc, err := f.ForKind(configMapGVK)
			if err != nil {
				t.Fatal(err)
			}
			sc.RegisterHandler(t.Context(), "phoenix", controller.SharedHandlerFunc(func(k string, obj runtime.Object) (runtime.Object, error) {
				return obj, h(k, obj)
			}))
			if err := f.Start(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			return sc
		})
	})
}

// enqueueAfterOfARecreatedObject is the case of
// TestAdv1EnqueueAfterOfAnObjectCreatedAgainBeforeTheDeletionPassEndsIsKept
// for the controller start builds (from a factory whose retries are
// limited by the hook, or the informer, handler and hook) and starts.
func enqueueAfterOfARecreatedObject(t *testing.T, start func(*testing.T, *controller.SharedControllerFactory, toolscache.SharedIndexInformer, controller.HandlerFunc, *forgetHook) controller.Controller) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/phoenix"
	limiter := &forgetHook{key: key}
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		RateLimiter: func(schema.GroupVersionKind) clientworkqueue.TypedRateLimiter[string] { return limiter },
	}})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	var c controller.Controller
	var (
		mu       sync.Mutex
		newUID   types.UID
		newSeen  int // passes that gave the handler the object created again
		nilSeen  int
		hookDone = make(chan struct{})
	)
	limiter.hook = func() {
		defer close(hookDone)
		// The cache has the new object when the EnqueueAfter is asked
		// for: it exists for the controller too.
		if cm := createCached(t, cms, informer.GetStore(), "phoenix"); cm != nil {
			mu.Lock()
			newUID = cm.UID
			mu.Unlock()
			c.EnqueueAfter(ns, "phoenix", 2*time.Second)
		}
	}
	handler := controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k != key {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case obj == nil:
			nilSeen++
			if nilSeen == 1 {
				limiter.armed.Store(true) // this pass's Forget runs the hook
			}
		case newUID != "" && obj.(metav1.Object).GetUID() == newUID:
			newSeen++
		}
		return nil
	})
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	c = start(t, f, informer, handler, limiter)
	controlplanetest.Eventually(t, 30*time.Second, "the informer synced", informer.HasSynced)
	if createCached(t, cms, informer.GetStore(), "phoenix") == nil {
		t.Fatal("phoenix was not created")
	}
	if err := cms.Delete(t.Context(), "phoenix", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, hookDone, "the deletion pass of phoenix forgets its retries (the hook runs)")
	controlplanetest.Eventually(t, 30*time.Second, "the handler is given phoenix, created again, by its creation event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return newSeen >= 1
	})
	// The EnqueueAfter is due 2 s after the hook; 30 s is far beyond.
	ok := waitUntilFor(30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return newSeen >= 2
	})
	if !ok {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the EnqueueAfter of phoenix (created again, in the cache) asked for after its deletion was told never ran: "+
			"the handler was given the new object %d time(s) in 30 s, want 2 (its creation, then the EnqueueAfter); told it is gone %d time(s)", newSeen, nilSeen)
	}
}

// waitUntilFor polls cond every 10 ms until it holds (true) or d passes
// (false).
func waitUntilFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// createCached creates the ConfigMap name and returns it once store has it
// (or the wait's bound passed); it returns nil, and marks t failed, when
// the create fails. It may run in a handler or a hook.
func createCached(t *testing.T, cms typedcorev1.ConfigMapInterface, store toolscache.Store, name string) *corev1.ConfigMap {
	cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Error(err)
		return nil
	}
	waitUntil(t, func() bool {
		_, ok, err := store.GetByKey(cm.Namespace + "/" + name)
		return err == nil && ok
	})
	return cm
}
