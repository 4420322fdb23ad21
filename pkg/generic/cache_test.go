package generic_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

func metav1LabelSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func byData(cm *corev1.ConfigMap) ([]string, error) {
	if cm.Data["v"] == "" {
		return nil, nil
	}
	return []string{cm.Data["v"]}, nil
}

func byLabel(cm *corev1.ConfigMap) ([]string, error) {
	if cm.Labels["tier"] == "" {
		return nil, nil
	}
	return []string{cm.Labels["tier"]}, nil
}

func cmNames(cms []*corev1.ConfigMap) []string {
	out := make([]string, 0, len(cms))
	for _, cm := range cms {
		out = append(out, cm.Name)
	}
	slices.Sort(out)
	return out
}

func TestCache(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	c := cms.Cache()
	if err := c.AddIndexer("tier", byLabel); err != nil {
		t.Fatalf("AddIndexer before start: %v", err)
	}

	for name, tier := range map[string]string{"a": "web", "b": "web", "c": "db"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"tier": tier}},
			Data:       map[string]string{"v": name + "-value"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	start(t, f)
	eventually(t, "three objects cached", func() bool {
		all, err := c.List(ns, nil)
		return err == nil && len(all) == 3
	})

	got, err := c.Get(ns, "a")
	if err != nil || got.Name != "a" || got.Labels["tier"] != "web" {
		t.Fatalf("Get hit: %+v, %v", got, err)
	}
	_, err = c.Get(ns, "missing")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Get miss: %v, want NotFound", err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d == nil || d.Group != "" || d.Kind != configMapsGR.Resource || d.Name != "missing" {
			t.Errorf("NotFound details %+v, want configmaps \"missing\"", d)
		}
	}
	// The cache lists ns only: it cannot answer for another namespace.
	if _, err := c.Get("other-namespace", "a"); !errors.As(err, new(*cache.NotCoveredError)) {
		t.Errorf("Get in another namespace: %v, want a *cache.NotCoveredError", err)
	}

	if web, err := c.List(ns, metav1LabelSelector(t, "tier=web")); err != nil || !slices.Equal(cmNames(web), []string{"a", "b"}) {
		t.Errorf("List tier=web: %v, %v", cmNames(web), err)
	}
	if all, err := c.List("", labels.Everything()); err != nil || len(all) != 3 {
		t.Errorf("List all namespaces: %v, %v", cmNames(all), err)
	}
	if none, err := c.List("other-namespace", nil); !errors.As(err, new(*cache.NotCoveredError)) {
		t.Errorf("List of another namespace: %v, %v, want a *cache.NotCoveredError", cmNames(none), err)
	}

	if web, err := c.GetByIndex("tier", "web"); err != nil || !slices.Equal(cmNames(web), []string{"a", "b"}) {
		t.Errorf("GetByIndex before-start index: %v, %v", cmNames(web), err)
	}
	// An index added after start covers the objects already cached. It is
	// added while another goroutine lists, which the race detector checks.
	listing := make(chan struct{})
	go func() {
		defer close(listing)
		for range 100 {
			if _, err := c.List(ns, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	if err := c.AddIndexer("value", byData); err != nil {
		t.Fatalf("AddIndexer after start: %v", err)
	}
	<-listing
	if got, err := c.GetByIndex("value", "c-value"); err != nil || !slices.Equal(cmNames(got), []string{"c"}) {
		t.Errorf("GetByIndex after-start index: %v, %v", cmNames(got), err)
	}
	// ... and the ones that arrive later.
	createCM(t, ns, "d")
	eventually(t, "new object indexed", func() bool {
		got, err := c.GetByIndex("value", "0")
		return err == nil && slices.Equal(cmNames(got), []string{"d"})
	})

	if err := c.AddIndexer("value", byData); err == nil {
		t.Error("AddIndexer with a name in use succeeded")
	}
	if err := c.AddIndexer("nil", nil); err == nil {
		t.Error("AddIndexer with a nil indexer succeeded")
	}
	if _, err := c.GetByIndex("no-such-index", "x"); err == nil {
		t.Error("GetByIndex of a missing index succeeded")
	}
}

// TestAddIndexerWithDefaultCacheOptions covers informers created with no
// indexers configured: adding one after start must work, and listing a
// namespace must work without the namespace index.
func TestAddIndexerWithDefaultCacheOptions(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	cms := newConfigMaps(t, f)
	createCM(t, ns, "a")
	start(t, f)
	eventually(t, "object cached", func() bool {
		got, err := cms.Cache().List(ns, nil)
		return err == nil && len(got) == 1
	})
	if err := cms.Cache().AddIndexer("value", byData); err != nil {
		t.Fatalf("AddIndexer: %v", err)
	}
	if got, err := cms.Cache().GetByIndex("value", "0"); err != nil || !slices.Equal(cmNames(got), []string{"a"}) {
		t.Errorf("GetByIndex: %v, %v", cmNames(got), err)
	}
}
