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

// streamDeleteInformer is a streaming informer whose GetStreamed of one
// key, once armed, waits until that key's deletion notification has been
// handed to the event handlers: the interleaving in which a deletion is
// delivered while a pass of a run that began on a streamed list reads the
// key (after it recorded its read, before GetStreamed looks).
type streamDeleteInformer struct {
	toolscache.SharedIndexInformer
	reader            cache.StreamReader
	key               string
	armed             atomic.Bool
	inRead, delivered chan struct{}
	done              <-chan struct{}
	once              sync.Once
}

func (s *streamDeleteInformer) StreamsInitialList() bool { return s.reader.StreamsInitialList() }

func (s *streamDeleteInformer) GetStreamed(key string) (any, bool, bool, error) {
	if key == s.key && s.armed.CompareAndSwap(true, false) {
		close(s.inRead)
		select {
		case <-s.delivered:
		case <-s.done:
		}
	}
	return s.reader.GetStreamed(key)
}

func (s *streamDeleteInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    h.OnAdd,
		UpdateFunc: h.OnUpdate,
		DeleteFunc: func(obj any) {
			h.OnDelete(obj)
			if k, _ := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); k == s.key {
				s.once.Do(func() { close(s.delivered) })
			}
		},
	})
}

// TestDeletionDuringAStreamedRunsReadIsToldOnce: a controller whose first
// run began on a streamed initial list reads every key of that run through
// GetStreamed, recording its hand-out as having read before it looks. A
// deletion delivered in between queues the key again (AddUnlessUnread sees
// a hand-out that has read); the pass then finds the object gone and tells
// the handlers, and the pass queued again tells them a second time.
func TestDeletionDuringAStreamedRunsReadIsToldOnce(t *testing.T) {
	openDefect(t)
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
		inRead: make(chan struct{}), delivered: make(chan struct{}), done: t.Context().Done()}
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
	select {
	case <-informer.inRead:
	case <-t.Context().Done():
		t.Fatal("the pass never read doomed")
	}
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-informer.delivered:
	case <-t.Context().Done():
		t.Fatal("the deletion's notification never reached the controller")
	}
	// One worker, FIFO within a priority: once the first key is handled,
	// the pass that read doomed has ended (a key queued during it waits
	// until then); once the second is, a pass queued again during it has
	// run.
	for _, name := range []string{"after-the-pass", "after-the-deletion"} {
		c.Enqueue(ns, name)
		controlplanetest.Eventually(t, 30*time.Second, "the handler reaches "+name, func() bool {
			_, ok := rec.seen(ns + "/" + name)
			return ok
		})
	}
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, rec.order())
	}
}
