package lasso_test

import (
	"sync"
	"testing"

	"github.com/rancher/wrangler/v3/pkg/condition"
	"github.com/rancher/wrangler/v3/pkg/schemes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	widgetv1 "github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/apis/widgets.lasso.lariat.dev/v1"
	"github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/generated/controllers/widgets.lasso.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/crd"
)

var widgetGVK = widgetv1.SchemeGroupVersion.WithKind("Widget")

// TestWranglerGeneratedCustomKind runs a custom kind's controllers as
// wrangler's own generator wrote them (testdata/wrangler, see doc.go's
// go:generate line) on Lariat's core: wrangler's generated factory over
// lasso.NewSharedControllerFactory. Its OnChange handler reads the cache
// and writes the status through wrangler's generated client; the test
// creates and updates the Widget through that client too.
func TestWranglerGeneratedCustomKind(t *testing.T) {
	cfg := cp.Config()
	if err := crd.Install(t.Context(), cfg, crd.Type{GVK: widgetGVK, Status: true}.CRD()); err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cfg)
	// Wrangler's generated packages register their kinds into
	// schemes.All when imported, and lasso's factories use it; Lariat's
	// client factory is given it the same way.
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: schemes.All})
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	lf, err := controller.NewSharedControllerFactory(caches, nil)
	if err != nil {
		t.Fatal(err)
	}
	adapter := lasso.NewSharedControllerFactory(lf)
	factory, err := widgets.NewFactoryFromConfigWithOptions(cfg, &widgets.FactoryOptions{SharedControllerFactory: adapter})
	if err != nil {
		t.Fatal(err)
	}
	w := factory.Widgets().V1().Widget()

	ready := condition.Cond("Ready")
	s := newSeenKeys()
	w.OnChange(t.Context(), "observe-size", func(key string, obj *widgetv1.Widget) (*widgetv1.Widget, error) {
		s.add(key)
		if obj == nil {
			return nil, nil
		}
		// The handler reads the cache, as wrangler handlers do.
		cached, err := w.Cache().Get(obj.Namespace, obj.Name)
		if err != nil {
			return obj, err
		}
		if cached.Status.ObservedSize == cached.Spec.Size {
			return obj, nil
		}
		obj = cached.DeepCopy()
		obj.Status.ObservedSize = obj.Spec.Size
		ready.True(obj)
		return w.UpdateStatus(obj)
	})
	if err := factory.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}

	lariatInformer := adapter.Lariat().SharedCacheFactory().Informers()[widgetGVK]
	if lariatInformer == nil || w.Informer() != lariatInformer {
		t.Fatalf("wrangler's Widget informer is %T, not Lariat's (%T)", w.Informer(), lariatInformer)
	}

	created, err := w.Create(&widgetv1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns},
		Spec:       widgetv1.WidgetSpec{Size: 3, Color: "red"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Size != 3 || created.UID == "" {
		t.Fatalf("created through wrangler's client: %+v", created)
	}
	observed := func(size int32) func() bool {
		return func() bool {
			got, err := w.Get(ns, "w", metav1.GetOptions{})
			if err != nil || got.Status.ObservedSize != size || !ready.IsTrue(got) {
				return false
			}
			cached, err := w.Cache().Get(ns, "w")
			return err == nil && cached.Status.ObservedSize == size
		}
	}
	eventually(t, "the handler writes the created Widget's size into its status", observed(3))
	if c := s.count(ns + "/w"); c == 0 {
		t.Fatal("OnChange never saw the Widget's key")
	}
	got, err := w.Get(ns, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Status != corev1.ConditionTrue || got.Status.Conditions[0].LastUpdateTime == "" {
		t.Fatalf("wrangler's condition as stored: %+v", got.Status.Conditions)
	}
	got.Spec.Size = 5
	if _, err := w.Update(got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the handler sees the update and writes the new size", observed(5))
	list, err := w.Cache().List(ns, labels.Everything())
	if err != nil || len(list) != 1 || list[0].Spec.Color != "red" {
		t.Fatalf("cache list: %v, %+v", err, list)
	}
}

// seenKeys counts the keys a handler was called with.
type seenKeys struct {
	mu   sync.Mutex
	keys map[string]int
}

func newSeenKeys() *seenKeys { return &seenKeys{keys: map[string]int{}} }

func (s *seenKeys) add(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key]++
}

func (s *seenKeys) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}
