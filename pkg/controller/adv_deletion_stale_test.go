package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// heldReadSetup is a controller over a streaming ConfigMap informer whose
// read of ns/doomed can be held (heldReadInformer), with doomed created
// and seen by the handler, which counts the passes telling it doomed is
// gone.
type heldReadSetup struct {
	ns, key   string
	informer  *heldReadInformer
	inner     interface{ HasSynced() bool }
	c         controller.Controller
	rec       *recorder
	nilPasses atomic.Int32
	caches    *cache.SharedCacheFactory
}

// newHeldReadSetup builds it; the controller is not started.
func newHeldReadSetup(t *testing.T, name string) *heldReadSetup {
	h := &heldReadSetup{ns: controlplanetest.Namespace(t, cp.Config()), rec: newRecorder()}
	h.key = h.ns + "/doomed"
	s := setup{}
	s.cacheOpts.Default = cache.Options{StreamInitialList: true}
	caches := newFactory(t, cp.Config(), h.ns, s).SharedCacheFactory()
	inner, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	reader, ok := inner.(cache.StreamReader)
	if !ok || !reader.StreamsInitialList() {
		t.Fatalf("the configmaps informer (%T) does not stream its initial list", inner)
	}
	h.inner, h.caches = inner, caches
	h.informer = &heldReadInformer{SharedIndexInformer: inner, reader: reader, key: h.key,
		inRead: make(chan struct{}), proceed: make(chan struct{}), deleted: make(chan struct{}), done: t.Context().Done()}
	if _, err := h.configMaps().Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.c, err = controller.New(name, h.informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == h.key && obj == nil {
			h.nilPasses.Add(1)
		}
		_, err := h.rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *heldReadSetup) configMaps() typedcorev1.ConfigMapInterface {
	return kube(cp.Config()).CoreV1().ConfigMaps(h.ns)
}

// startAndHoldTheRead starts the caches (the controller was started), has
// the handler see doomed, then holds a pass's read of doomed (through
// GetStreamed, as a read begun before the sync) and deletes doomed, and
// returns once the deletion's notification reached the controller.
func (h *heldReadSetup) startAndHoldTheRead(t *testing.T) {
	t.Helper()
	if err := h.caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees doomed, the informer synced", func() bool {
		cm, _ := h.rec.seen(h.key)
		return cm != nil && h.inner.HasSynced()
	})
	h.informer.armed.Store(true)
	h.c.Enqueue(h.ns, "doomed")
	waitClosed(t, h.informer.inRead, "the pass reads doomed")
	if err := h.configMaps().Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, h.informer.deleted, "the deletion's notification reaches the controller")
}

// toldOnce enqueues markers one after the other, each handled after the
// keys queued before it (one worker, FIFO within a priority), and fails
// unless the handler was told once that doomed is gone.
func (h *heldReadSetup) toldOnce(t *testing.T, markers ...string) {
	t.Helper()
	for _, name := range markers {
		h.c.Enqueue(h.ns, name)
		controlplanetest.Eventually(t, 30*time.Second, "the handler reaches "+name, func() bool {
			_, ok := h.rec.seen(h.ns + "/" + name)
			return ok
		})
	}
	if n := h.nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, h.rec.order())
	}
}

// TestDeletionReadByAStoppingRunAfterTheNextCompareIsToldOnce: a stopping
// run's pass over a key whose object was just deleted reads the store only
// after the next run's comparison queued the key (whose pass waits for the
// stopping one), finds the object gone and tells the handlers, who return
// nil. The next run's pass must not tell them a second time.
func TestDeletionReadByAStoppingRunAfterTheNextCompareIsToldOnce(t *testing.T) {
	h := newHeldReadSetup(t, "stale-delete")
	first, stopFirst := context.WithCancel(t.Context())
	defer stopFirst()
	if err := h.c.Start(first, 1); err != nil {
		t.Fatal(err)
	}
	h.startAndHoldTheRead(t)
	stopFirst()
	if err := h.c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// The new run compares before its workers start, and its comparison
	// queues doomed at High priority: once this key is handled, its worker
	// took doomed and left it to the stopping run's pass.
	h.c.Enqueue(h.ns, "after-the-comparison")
	controlplanetest.Eventually(t, 30*time.Second, "the new run handles a key", func() bool {
		_, ok := h.rec.seen(h.ns + "/after-the-comparison")
		return ok
	})
	close(h.informer.proceed)
	h.toldOnce(t, "after-the-pass", "after-the-hand-back")
}
