package cache_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4CompactCacheKeepsFieldsNamedLikeWhatItCuts: custom resources of
// a preserve-unknown-fields CRD with members named managedFields and
// metadata outside metadata, and annotations the API server writes with
// escapes (<, >, & as \u003c...; non-ASCII), read by a compact cache that
// takes them from the wire, through a watch-list and through plain lists,
// and an update: field for field what the default cache holds, the odd
// members kept, and at least the listed objects read from the wire.
func TestAdv4CompactCacheKeepsFieldsNamedLikeWhatItCuts(t *testing.T) {
	for _, listing := range []bool{false, true} {
		t.Run(fmt.Sprintf("list=%v", listing), func(t *testing.T) {
			dir, gvk, gvr, err := testkinds.NewLateKind(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			// Its schema keeps unknown fields everywhere (the Widget's prunes them).
			if err := controlplane.InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
				t.Fatal(err)
			}
			ns := controlplanetest.Namespace(t, cp.Config())
			widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(gvr).Namespace(ns)
			for i := range 3 {
				w := testkinds.Widget(ns, fmt.Sprintf("w-%d", i), int64(i))
				w.SetGroupVersionKind(gvk)
				w.SetLabels(map[string]string{"app": "shop", "i": fmt.Sprint(i)})
				w.SetAnnotations(map[string]string{"html": "<a href=\"x\">&amp;</a>", "u": "é\u2028\\"})
				w.Object["managedFields"] = []any{"top"}
				w.Object["spec"].(map[string]any)["metadata"] = map[string]any{"managedFields": []any{int64(1)}, "name": "inner"}
				if _, err := widgets.Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var in informers
			if listing {
				in = listingCompactAndPlain(t, ns, gvk)
			} else {
				in = compactAndPlain(t, ns, gvk, 0)
			}
			in.start(t)
			check := func(i int) {
				got := in.sameAsPlain(t, fmt.Sprintf("%s/w-%d", ns, i))
				u := got.(*unstructured.Unstructured)
				inner, _, _ := unstructured.NestedSlice(u.Object, "spec", "metadata", "managedFields")
				top, _, _ := unstructured.NestedSlice(u.Object, "managedFields")
				if u.GetManagedFields() != nil || len(inner) != 1 || len(top) != 1 || u.GetAnnotations()["u"] != "é\u2028\\" ||
					u.GetLabels()["i"] != fmt.Sprint(i) {
					t.Fatalf("w-%d read from the compact cache: %v", i, u.Object)
				}
			}
			for i := range 3 {
				check(i)
			}
			if n := cache.WiredObjects(in.compact); n < 3 {
				t.Fatalf("%d objects read from the wire, want at least the 3 listed", n)
			}
			w, err := widgets.Get(t.Context(), "w-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.SetLabels(map[string]string{"app": "shop", "i": "1", "new": "x"})
			if _, err := widgets.Update(t.Context(), w, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			controlplanetest.Eventually(t, time.Minute, "the update in the default cache", func() bool {
				return resourceVersionOf(get(t, in.plain, ns+"/w-1")) != w.GetResourceVersion()
			})
			check(1)
		})
	}
}
