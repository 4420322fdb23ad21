package controller_test

import (
	"sync"
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
// never reach the event handlers added through it, as when client-go drops
// the notifications it had not delivered when the informer stopped for a
// relist (410 Gone). Its OnRelisted hooks are called by the test, standing
// for the rebuilt informer's sync.
type droppingInformer struct {
	toolscache.SharedIndexInformer
	drop string // the key whose deletion is dropped

	mu    sync.Mutex
	hooks []func()
}

func (d *droppingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return d.SharedIndexInformer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    h.OnAdd,
		UpdateFunc: h.OnUpdate,
		DeleteFunc: func(obj any) {
			if key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil && key == d.drop {
				return
			}
			h.OnDelete(obj)
		},
	})
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

// TestDeletionDroppedByARelistReachesTheHandlers (issue 24, case 6): a
// running controller whose informer is rebuilt after 410 Gone loses the
// deletions the old informer had applied to its store but not delivered;
// the rebuilt one is seeded from that store and lists again, so nothing
// tells the handlers. Once the rebuilt informer has synced, the controller
// compares the keys its handlers saw with the store and delivers the
// deletion.
func TestDeletionDroppedByARelistReachesTheHandlers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	inner, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	informer := &droppingInformer{SharedIndexInformer: inner, drop: ns + "/doomed"}
	rec := newRecorder()
	c, err := controller.New("relist", informer, controller.HandlerFunc(func(key string, obj runtime.Object) error {
		_, err := rec.OnChange(key, obj)
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
	createCM(t, cp.Config(), ns, "doomed", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees the object", func() bool {
		cm, _ := rec.seen(ns + "/doomed")
		return cm != nil
	})
	if err := kube(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the store drops the object", func() bool {
		_, ok, err := inner.GetStore().GetByKey(ns + "/doomed")
		return err == nil && !ok
	})
	// A bystander created after the deletion is handled once its event
	// came through: the deletion's was dropped, not late.
	createCM(t, cp.Config(), ns, "bystander", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees a later object", func() bool {
		cm, _ := rec.seen(ns + "/bystander")
		return cm != nil
	})
	if cm, _ := rec.seen(ns + "/doomed"); cm == nil {
		t.Fatal("the deletion reached the handler although its event was dropped: the test shows nothing")
	}

	informer.relisted()
	controlplanetest.Eventually(t, 30*time.Second, "the handler told of the deletion after the relist", func() bool {
		cm, ok := rec.seen(ns + "/doomed")
		return ok && cm == nil
	})
}
