package controller_test

import (
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

// streamDeleteInformer is a streaming informer whose first read of one
// key, once armed, waits until that key's deletion notification was handed
// to the controller's event handler: the interleaving in which a deletion
// is delivered while a pass of a run that began on a streamed list reads
// the key. The read is GetStreamed's (outside the known keys' lock: it
// waits until the handler returned) or the store's (the pass then holds
// that lock, so it waits only until the notification reached the handler,
// which takes the lock after the read).
type streamDeleteInformer struct {
	toolscache.SharedIndexInformer
	reader                      cache.StreamReader
	key                         string
	armed                       atomic.Bool
	inRead, arriving, delivered chan struct{}
	done                        <-chan struct{}
	arrive, deliver             sync.Once
}

func (s *streamDeleteInformer) StreamsInitialList() bool { return s.reader.StreamsInitialList() }

func (s *streamDeleteInformer) GetStreamed(key string) (any, bool, bool, error) {
	s.holdRead(key, s.delivered)
	return s.reader.GetStreamed(key)
}

func (s *streamDeleteInformer) GetStore() toolscache.Store {
	return &streamDeleteStore{Store: s.SharedIndexInformer.GetStore(), s: s}
}

// holdRead holds the armed read of s.key until until is closed.
func (s *streamDeleteInformer) holdRead(key string, until <-chan struct{}) {
	if key == s.key && s.armed.CompareAndSwap(true, false) {
		close(s.inRead)
		select {
		case <-until:
		case <-s.done:
		}
	}
}

// streamDeleteStore is the informer's store, its read of the armed key held.
type streamDeleteStore struct {
	toolscache.Store
	s *streamDeleteInformer
}

func (d *streamDeleteStore) GetByKey(key string) (any, bool, error) {
	d.s.holdRead(key, d.s.arriving)
	return d.Store.GetByKey(key)
}

func (s *streamDeleteInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    h.OnAdd,
		UpdateFunc: h.OnUpdate,
		DeleteFunc: func(obj any) {
			k, _ := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if k == s.key {
				s.arrive.Do(func() { close(s.arriving) })
			}
			h.OnDelete(obj)
			if k == s.key {
				s.deliver.Do(func() { close(s.delivered) })
			}
		},
	})
}

// TestDeletionDuringAStreamedRunsReadIsToldOnce: a deletion delivered
// while a pass of a run that began on a streamed initial list reads the
// key, after the informer synced, is told the handlers once. Before: every
// key of that run was read through GetStreamed, the hand-out recorded as
// having read before it looked, so a deletion delivered in between queued
// the key again (AddUnlessUnread saw a hand-out that had read); the pass
// found the object gone and told the handlers, and the pass queued again
// told them a second time.
func TestDeletionDuringAStreamedRunsReadIsToldOnce(t *testing.T) {
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
	informer := &streamDeleteInformer{SharedIndexInformer: inner, reader: reader, key: key,
		inRead: make(chan struct{}), arriving: make(chan struct{}), delivered: make(chan struct{}),
		done: t.Context().Done()}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	var nilPasses atomic.Int32
	c, err := controller.New("stream-delete", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil {
			nilPasses.Add(1)
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), 1); err != nil {
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
	waitClosed(t, informer.delivered, "the deletion's notification reaches the controller")
	// One worker, FIFO within a priority: once the first key is handled,
	// the pass that read doomed has ended (a key queued during it waits
	// until then); once the second is, a pass queued again during it has
	// run.
	handleInTurn(t, c, rec, ns, "after-the-pass", "after-the-deletion")
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}
