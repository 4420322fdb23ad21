package cache_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// listingCompactAndPlain is compactAndPlain with informers that list
// instead of asking for a watch-list.
func listingCompactAndPlain(t *testing.T, ns string, gvk schema.GroupVersionKind) informers {
	t.Helper()
	var in informers
	in.compactFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, NoWatchList: true},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}},
	})
	in.plainFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, NoWatchList: true}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	if in.plain, err = in.plainFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestCompactCacheReadsListsFromTheWire shows that a compact cache that
// lists (no watch-list) keeps the listed objects from the wire bytes:
// Pods (protobuf), a list of ConfigMaps in two pages (the reflector asks
// for 500 a page), and unstructured Widgets (JSON); every listed object is
// the default cache's, field for field.
func TestCompactCacheReadsListsFromTheWire(t *testing.T) {
	t.Run("pods", func(t *testing.T) {
		ns := controlplanetest.Namespace(t, cp.Config())
		for i := range 3 {
			applyPod(t, ns, fmt.Sprintf("pod-%d", i), "first")
		}
		in := listingCompactAndPlain(t, ns, podGVK)
		in.start(t)
		listedFromTheWire(t, in, 3)
		for i := range 3 {
			if pod := in.sameAsPlain(t, fmt.Sprintf("%s/pod-%d", ns, i)).(*corev1.Pod); pod.ManagedFields != nil || len(pod.Spec.Containers) != 1 {
				t.Fatalf("pod-%d read from the compact cache: %+v", i, pod.ObjectMeta)
			}
		}
	})
	t.Run("configmaps in pages", func(t *testing.T) {
		ns := controlplanetest.Namespace(t, cp.Config())
		const n = 501
		for i := range n {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"app": "shop"}},
				Data: map[string]string{"i": fmt.Sprint(i)}}
			if _, err := kube(t).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		in := listingCompactAndPlain(t, ns, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		in.start(t)
		listedFromTheWire(t, in, n)
		for _, i := range []int{0, 250, 499, 500} {
			in.sameAsPlain(t, fmt.Sprintf("%s/cm-%03d", ns, i))
		}
	})
	t.Run("widgets", func(t *testing.T) {
		ns := controlplanetest.Namespace(t, cp.Config())
		widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(testkinds.WidgetGVR).Namespace(ns)
		for i := range 3 {
			if _, err := widgets.Create(t.Context(), testkinds.Widget(ns, fmt.Sprintf("w-%d", i), int64(1<<53+i)), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		in := listingCompactAndPlain(t, ns, testkinds.WidgetGVK)
		in.start(t)
		listedFromTheWire(t, in, 3)
		for i := range 3 {
			in.sameAsPlain(t, fmt.Sprintf("%s/w-%d", ns, i))
		}
	})
}

// listedFromTheWire fails the test unless both caches hold n objects and
// the compact one read at least n from the wire: with no watch-list and
// nothing written since, those are the listed ones.
func listedFromTheWire(t *testing.T, in informers, n int) {
	t.Helper()
	if got, want := len(in.compact.GetStore().ListKeys()), len(in.plain.GetStore().ListKeys()); got != n || want != n {
		t.Fatalf("the compact cache holds %d objects, the default one %d, want %d", got, want, n)
	}
	if wired := cache.WiredObjects(in.compact); wired < int64(n) {
		t.Fatalf("%d objects read from the wire, want the %d listed", wired, n)
	}
}
