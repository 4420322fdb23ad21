package controller_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// lateDeleteInformer is a factory's informer whose notifications of one
// object reach the event handlers added through it in the interleaving
// that client-go's own delivery makes now and then (its listeners are
// served in the background, after the store changed): an update of the
// object being deleted arrives once the store has dropped it, and the
// deletion's own notification arrives while the pass that update queued
// is under way.
type lateDeleteInformer struct {
	toolscache.SharedIndexInformer
	key string
	// inPass is closed by the test's handler when it is first told the
	// object is gone; delivered is closed once the deletion's notification
	// has been handed to the event handler.
	inPass, delivered chan struct{}
	done              <-chan struct{} // the test's end: stop waiting
	once              sync.Once
}

func (l *lateDeleteInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return l.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: h.OnAdd,
		UpdateFunc: func(oldObj, newObj any) {
			if l.keyOf(newObj) == l.key && newObj.(*corev1.ConfigMap).DeletionTimestamp != nil {
				l.waitGone()
			}
			h.OnUpdate(oldObj, newObj)
		},
		DeleteFunc: func(obj any) {
			if l.keyOf(obj) != l.key {
				h.OnDelete(obj)
				return
			}
			select {
			case <-l.inPass:
			case <-l.done:
			}
			h.OnDelete(obj)
			l.once.Do(func() { close(l.delivered) })
		},
	})
}

func (l *lateDeleteInformer) keyOf(obj any) string {
	key, _ := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key
}

// waitGone returns once the store has dropped the object (or the test
// ended): the informer applies a deletion to its store before it hands
// out the notification, so this holds back only this one listener.
func (l *lateDeleteInformer) waitGone() {
	for {
		if _, ok, err := l.GetStore().GetByKey(l.key); err == nil && !ok {
			return
		}
		select {
		case <-l.done:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// TestDeletionNotifiedDuringThePassOfAnUpdateIsNotHandledAgain: an object
// being deleted (its finalizer removed last) brings an update and then its
// deletion. When the update's pass reads the store after the object went,
// that pass already tells the handlers it is gone; the deletion's
// notification, arriving during that pass, queued the key again, and the
// handlers were told a second time (compat/lasso's
// TestSideBySideTwoOnRemoveNotRunAgainOnAStaleCopy saw it about one run in
// three with -race).
func TestDeletionNotifiedDuringThePassOfAnUpdateIsNotHandledAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/doomed"
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	inner, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	informer := &lateDeleteInformer{SharedIndexInformer: inner, key: key,
		inPass: make(chan struct{}), delivered: make(chan struct{}), done: t.Context().Done()}
	rec := newRecorder()
	var nilPasses atomic.Int32
	c, err := controller.New("late-delete", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil && nilPasses.Add(1) == 1 {
			close(informer.inPass)
			select { // the deletion's notification comes during this pass
			case <-informer.delivered:
			case <-t.Context().Done():
			}
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	doomed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed", Finalizers: []string{"lariat.dev/test"}}}
	if _, err := cms.Create(t.Context(), doomed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees the object", func() bool {
		cm, _ := rec.seen(key)
		return cm != nil
	})
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The update that sets the deletionTimestamp is held until the
	// object is gone: removing the finalizer deletes it.
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := cms.Patch(t.Context(), "doomed", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, informer.delivered, "the deletion's notification reaches the controller")
	// One worker, FIFO within a priority: once the first key is handled,
	// the pass of the update has ended (a key queued during it waits
	// until then); once the second is, a pass the deletion's notification
	// queued has run.
	handleInTurn(t, c, rec, ns, "after-the-pass", "after-the-deletion")
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}
