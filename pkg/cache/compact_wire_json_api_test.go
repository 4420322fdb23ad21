package cache_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestCompactCacheReadsCustomResourcesFromTheWire shows that a compact
// cache of a custom resource keeps its objects from the wire JSON (no
// decode and encode again when they arrive), typed and unstructured, and
// still holds, field for field, what the default cache holds: through the
// initial events, an update and a delete.
func TestCompactCacheReadsCustomResourcesFromTheWire(t *testing.T) {
	for _, typed := range []bool{true, false} {
		t.Run(fmt.Sprintf("typed=%v", typed), func(t *testing.T) {
			ns := controlplanetest.Namespace(t, cp.Config())
			widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(testkinds.WidgetGVR).Namespace(ns)
			for i := range 3 {
				w := testkinds.Widget(ns, fmt.Sprintf("w-%d", i), int64(1<<53+i))
				w.SetLabels(map[string]string{"app": "shop"})
				if _, err := widgets.Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var in informers
			if typed {
				in.compactFactory = adv3TypedWidgetFactory(t, &cache.SharedCacheFactoryOptions{
					Default: cache.Options{Namespace: ns},
					Kinds:   map[schema.GroupVersionKind]cache.KindOptions{testkinds.WidgetGVK: {Compact: ptr.To(true), HotObjects: ptr.To(1)}},
				})
				in.plainFactory = adv3TypedWidgetFactory(t, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
				var err error
				if in.compact, err = in.compactFactory.ForKind(testkinds.WidgetGVK); err != nil {
					t.Fatal(err)
				}
				if in.plain, err = in.plainFactory.ForKind(testkinds.WidgetGVK); err != nil {
					t.Fatal(err)
				}
			} else {
				in = compactAndPlain(t, ns, testkinds.WidgetGVK, 0)
			}
			in.start(t)
			for i := range 3 {
				got := in.sameAsPlain(t, fmt.Sprintf("%s/w-%d", ns, i))
				if w, ok := got.(*adv3Widget); ok && (w.ManagedFields != nil || w.Labels["app"] != "shop" || w.Spec["size"] != int64(1<<53+i)) {
					t.Fatalf("w-%d read from the compact cache: %+v", i, w)
				}
				if u, ok := got.(*unstructured.Unstructured); ok && (u.GetManagedFields() != nil || u.GetLabels()["app"] != "shop") {
					t.Fatalf("w-%d read from the compact cache: %v", i, u.Object)
				}
			}
			w, err := widgets.Get(t.Context(), "w-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.SetAnnotations(map[string]string{"note": "second"})
			if _, err := widgets.Update(t.Context(), w, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			controlplanetest.Eventually(t, time.Minute, "the update in the default cache", func() bool {
				return resourceVersionOf(get(t, in.plain, ns+"/w-1")) != w.GetResourceVersion()
			})
			in.sameAsPlain(t, ns+"/w-1")
			if err := widgets.Delete(t.Context(), "w-2", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			controlplanetest.Eventually(t, time.Minute, "w-2 gone from the compact cache", func() bool {
				_, ok, _ := in.compact.GetStore().GetByKey(ns + "/w-2")
				return !ok
			})
			// The three of the watch-list's initial events, the update and the delete.
			if n := cache.WiredObjects(in.compact); n < 5 {
				t.Fatalf("%d objects read from the wire, want at least 5", n)
			}
			t.Logf("%d objects read from the wire", cache.WiredObjects(in.compact))
		})
	}
}
