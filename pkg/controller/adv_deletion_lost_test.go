package controller_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// heldReadInformer is a streaming informer that can hold one key's
// GetStreamed until the test lets it go, and can answer HasSynced false
// for a while: it puts the read of a stopping run's pass after the next
// run's start and before that run's comparison.
type heldReadInformer struct {
	toolscache.SharedIndexInformer
	reader                   cache.StreamReader
	key                      string
	armed, holdSync          atomic.Bool
	inRead, proceed, deleted chan struct{}
	done                     <-chan struct{}
	once                     sync.Once
}

func (h *heldReadInformer) StreamsInitialList() bool { return h.reader.StreamsInitialList() }

// HasSynced is false while the read is armed too: a pass reads through
// GetStreamed only when it begins before the sync (once synced it reads
// the store under the known keys' lock, which a held read would keep the
// next Start from taking).
func (h *heldReadInformer) HasSynced() bool {
	return !h.armed.Load() && !h.holdSync.Load() && h.SharedIndexInformer.HasSynced()
}

func (h *heldReadInformer) GetStreamed(key string) (any, bool, bool, error) {
	if key == h.key && h.armed.CompareAndSwap(true, false) {
		close(h.inRead)
		select {
		case <-h.proceed:
		case <-h.done:
		}
	}
	return h.reader.GetStreamed(key)
}

func (h *heldReadInformer) AddEventHandler(eh toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return h.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    eh.OnAdd,
		UpdateFunc: eh.OnUpdate,
		DeleteFunc: func(obj any) {
			eh.OnDelete(obj)
			if k, _ := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); k == h.key {
				h.once.Do(func() { close(h.deleted) })
			}
		},
	})
}

// TestDeletionFailedByAStoppingRunIsToldByTheNext: a run's pass over a key
// whose object was just deleted reads the store only after the controller
// was started again (its first run began on a streamed list, so it reads
// through GetStreamed, outside the known keys' lock), finds the object
// gone, and its handler fails (the run is stopping; its retry goes with
// its queue). That read marks the key's deletion as queued in the new
// run's records (readKnown), which the new run's Start had just reset, so
// the new run's comparison skips the key: the handlers never see the
// deletion through.
func TestDeletionFailedByAStoppingRunIsToldByTheNext(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/doomed"
	s := setup{}
	s.cacheOpts.Default = cache.Options{StreamInitialList: true}
	f := newFactory(t, cp.Config(), ns, s)
	caches := f.SharedCacheFactory()
	inner, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	reader, ok := inner.(cache.StreamReader)
	if !ok || !reader.StreamsInitialList() {
		t.Fatalf("the configmaps informer (%T) does not stream its initial list", inner)
	}
	informer := &heldReadInformer{SharedIndexInformer: inner, reader: reader, key: key,
		inRead: make(chan struct{}), proceed: make(chan struct{}), deleted: make(chan struct{}), done: t.Context().Done()}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	var nilPasses, toldGone atomic.Int32
	c, err := controller.New("lost-delete", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil && nilPasses.Add(1) == 1 {
			return errTransient // the run is stopping: its retry is dropped
		}
		if k == key && obj == nil {
			toldGone.Add(1)
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	first, stopFirst := context.WithCancel(t.Context())
	defer stopFirst()
	if err := c.Start(first, 1); err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees doomed, the informer synced", func() bool {
		cm, _ := rec.seen(key)
		return cm != nil && inner.HasSynced()
	})
	informer.armed.Store(true)
	c.Enqueue(ns, "doomed")
	waitClosed(t, informer.inRead, "the pass reads doomed")
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Handed to the first run, whose queue has the key again.
	waitClosed(t, informer.deleted, "the deletion's notification reaches the controller")
	informer.holdSync.Store(true)
	stopFirst()
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	close(informer.proceed)
	controlplanetest.Eventually(t, 30*time.Second, "the stopping run's pass reads doomed and fails", func() bool {
		return nilPasses.Load() >= 1
	})
	informer.holdSync.Store(false)
	// The new run compares its store with the keys it knows before its
	// workers start: once the first of these is handled, a key the
	// comparison queued is ahead of the second.
	handleInTurn(t, c, rec, ns, "after-the-comparison", "after-the-deletion")
	if n := toldGone.Load(); n != 1 {
		t.Fatalf("the handler saw doomed's deletion through %d times, want once; keys handled: %v", n, rec.order())
	}
}
