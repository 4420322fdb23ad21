package controller_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// droppingInformer is a factory's informer whose deletions of one object
// do not reach the event handlers added through it, as when client-go drops
// the notifications it had not delivered when the informer stopped for a
// relist (410 Gone). The test may deliver them late (deliverDropped), as
// client-go delivers a relist's tombstones in the background. Its
// OnRelisted hooks are called by the test, standing for the rebuilt
// informer's sync.
type droppingInformer struct {
	toolscache.SharedIndexInformer
	drop string // the key whose deletion is dropped

	mu      sync.Mutex
	hooks   []func()
	dropped []func() // the dropped deliveries
}

func (d *droppingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return d.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    h.OnAdd,
		UpdateFunc: h.OnUpdate,
		DeleteFunc: func(obj any) {
			if key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil && key == d.drop {
				d.mu.Lock()
				defer d.mu.Unlock()
				d.dropped = append(d.dropped, func() { h.OnDelete(obj) })
				return
			}
			h.OnDelete(obj)
		},
	})
}

// deliverDropped gives the event handlers the deletions dropped so far, as
// tombstones (what client-go delivers for a deletion a relist revealed);
// it returns how many.
func (d *droppingInformer) deliverDropped() int {
	d.mu.Lock()
	dropped := d.dropped
	d.dropped = nil
	d.mu.Unlock()
	for _, deliver := range dropped {
		deliver()
	}
	return len(dropped)
}

func (d *droppingInformer) OnRelisted(fn func()) (remove func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hooks = append(d.hooks, fn)
	return func() {}
}

func (d *droppingInformer) relisted() {
	d.mu.Lock()
	hooks := append([]func(){}, d.hooks...)
	d.mu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}

var _ cache.RelistNotifier = (*droppingInformer)(nil)

// droppedDeletion is a running controller, with one worker, over a
// droppingInformer: its handler saw the object "doomed", which was then
// deleted with its deletion dropped, and a bystander created after it.
type droppedDeletion struct {
	ns       string
	informer *droppingInformer
	c        controller.Controller
	rec      *recorder
	// nilPasses counts the passes that gave the handler doomed's absence.
	nilPasses atomic.Int32
	// onGone, when set (before the first such pass), is called in each of
	// those passes with its count.
	onGone func(n int32)
}

func startDroppedDeletion(t *testing.T) *droppedDeletion {
	d := &droppedDeletion{ns: controlplanetest.Namespace(t, cp.Config()), rec: newRecorder()}
	f := newFactory(t, cp.Config(), d.ns, setup{})
	caches := f.SharedCacheFactory()
	inner, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	d.informer = &droppingInformer{SharedIndexInformer: inner, drop: d.ns + "/doomed"}
	d.c, err = controller.New("relist", d.informer, controller.HandlerFunc(func(key string, obj runtime.Object) error {
		if key == d.ns+"/doomed" && obj == nil {
			if n := d.nilPasses.Add(1); d.onGone != nil {
				d.onGone(n)
			}
		}
		_, err := d.rec.OnChange(key, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := d.c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	createCM(t, cp.Config(), d.ns, "doomed", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees the object", func() bool {
		cm, _ := d.rec.seen(d.ns + "/doomed")
		return cm != nil
	})
	if err := kube(cp.Config()).CoreV1().ConfigMaps(d.ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the store drops the object", func() bool {
		_, ok, err := inner.GetStore().GetByKey(d.ns + "/doomed")
		return err == nil && !ok
	})
	// A bystander created after the deletion is handled once its event
	// came through: the deletion's was dropped, not late.
	createCM(t, cp.Config(), d.ns, "bystander", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees a later object", func() bool {
		cm, _ := d.rec.seen(d.ns + "/bystander")
		return cm != nil
	})
	if cm, _ := d.rec.seen(d.ns + "/doomed"); cm == nil {
		t.Fatal("the deletion reached the handler although its event was dropped: the test shows nothing")
	}
	return d
}

// TestDeletionDroppedByARelistReachesTheHandlers (issue 24, case 6): a
// running controller whose informer is rebuilt after 410 Gone loses the
// deletions the old informer had applied to its store but not delivered;
// the rebuilt one is seeded from that store and lists again, so nothing
// tells the handlers. Once the rebuilt informer has synced, the controller
// compares the keys its handlers saw with the store and delivers the
// deletion.
func TestDeletionDroppedByARelistReachesTheHandlers(t *testing.T) {
	d := startDroppedDeletion(t)
	d.informer.relisted()
	controlplanetest.Eventually(t, 30*time.Second, "the handler told of the deletion after the relist", func() bool {
		cm, ok := d.rec.seen(d.ns + "/doomed")
		return ok && cm == nil
	})
}

// TestLateTombstoneAfterARelistIsNotHandledAgain (996b081): after a relist,
// client-go delivers the deletions the new list revealed (tombstones) in
// the background, while the comparison that follows the relist may already
// have told the handlers of such a deletion and forgotten the key. The late
// tombstone must not tell them a second time.
func TestLateTombstoneAfterARelistIsNotHandledAgain(t *testing.T) {
	d := startDroppedDeletion(t)
	d.informer.relisted()
	controlplanetest.Eventually(t, 30*time.Second, "the handler told of the deletion after the relist", func() bool {
		return d.nilPasses.Load() == 1
	})
	// The one worker takes keys of a priority in the order they came: once
	// a key enqueued after the deletion's pass is handled, that pass has
	// ended, and the handlers are known to have been told.
	d.c.Enqueue(d.ns, "after-the-pass")
	controlplanetest.Eventually(t, 30*time.Second, "the handler reaches a key enqueued after the pass", func() bool {
		_, ok := d.rec.seen(d.ns + "/after-the-pass")
		return ok
	})
	if n := d.informer.deliverDropped(); n != 1 {
		t.Fatalf("%d deletions of doomed were dropped, want 1", n)
	}
	d.c.Enqueue(d.ns, "after-the-tombstone")
	controlplanetest.Eventually(t, 30*time.Second, "the handler reaches a key enqueued after the tombstone", func() bool {
		_, ok := d.rec.seen(d.ns + "/after-the-tombstone")
		return ok
	})
	if n := d.nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, d.rec.order())
	}
}

// TestLateTombstoneDuringTheRelistPassIsNotHandledAgain: as
// TestLateTombstoneAfterARelistIsNotHandledAgain, but the tombstone arrives
// while the handlers are being told of the deletion by the comparison's
// pass: the key is still known (it is forgotten only once that pass
// ended), and before the fix the tombstone queued it again, so the
// handlers were told a second time.
func TestLateTombstoneDuringTheRelistPassIsNotHandledAgain(t *testing.T) {
	d := startDroppedDeletion(t)
	inPass, release := make(chan struct{}), make(chan struct{})
	d.onGone = func(n int32) {
		if n == 1 {
			close(inPass)
			<-release
		}
	}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	d.informer.relisted()
	waitClosed(t, inPass, "the handler is told of the deletion after the relist")
	if n := d.informer.deliverDropped(); n != 1 {
		t.Fatalf("%d deletions of doomed were dropped, want 1", n)
	}
	close(release)
	// One worker, FIFO within a priority: once the first key is handled,
	// the pass has ended (a key queued during it waits until then); once
	// the second is, a pass the tombstone queued has run.
	handleInTurn(t, d.c, d.rec, d.ns, "after-the-pass", "after-the-tombstone")
	if n := d.nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that doomed is gone, want once; keys handled: %v", n, d.rec.order())
	}
}
