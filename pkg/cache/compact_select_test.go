package cache_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// setTier labels pod ns/name tier=tier with a merge patch.
func setTier(t *testing.T, ns, name, tier string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"tier":%q}}}`, tier)
	if _, err := kube(t).CoreV1().Pods(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podKeys returns the sorted keys of pods.
func podKeys(pods []*corev1.Pod) []string {
	keys := make([]string, 0, len(pods))
	for _, p := range pods {
		keys = append(keys, p.Namespace+"/"+p.Name)
	}
	slices.Sort(keys)
	return keys
}

// TestCompactCacheListsBySelector shows that a typed List by namespace and
// label selector of a compact cache, which compares the labels kept beside
// each encoded object and decodes only the objects it returns, returns
// exactly what the default cache's List returns, field for field: also
// after a label change moves an object into and out of the selection, and
// after a delete. The informers watch two namespaces and index by
// namespace, as typed controllers' informers do.
func TestCompactCacheListsBySelector(t *testing.T) {
	ns1 := controlplanetest.Namespace(t, cp.Config())
	ns2 := controlplanetest.Namespace(t, cp.Config())
	for _, ns := range []string{ns1, ns2} {
		for i := range 4 {
			name := fmt.Sprintf("pod-%d", i)
			applyPod(t, ns, name, "first")
			// Only this test's pods carry it: the informers select on it.
			patch := fmt.Sprintf(`{"metadata":{"labels":{"run":%q}}}`, ns1)
			if _, err := kube(t).CoreV1().Pods(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				setTier(t, ns, name, "web")
			}
		}
	}
	opts := cache.Options{LabelSelector: "run=" + ns1,
		Indexers: toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}}
	compactFactory := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: opts,
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{podGVK: {Compact: ptr.To(true), HotObjects: ptr.To(1)}}})
	plainFactory := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: opts})
	compactInformer, err := compactFactory.ForKind(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	plainInformer, err := plainFactory.ForKind(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := compactInformer.GetIndexer().(cache.SelectingIndexer); !ok {
		t.Fatalf("a compact informer's indexer (%T) does not list by selector itself", compactInformer.GetIndexer())
	}
	startAndSync(t, compactFactory)
	startAndSync(t, plainFactory)
	pods := corev1.SchemeGroupVersion.WithResource("pods").GroupResource()
	compact := generic.NewInformerCache[*corev1.Pod](compactInformer, pods)
	plain := generic.NewInformerCache[*corev1.Pod](plainInformer, pods)

	api := labels.SelectorFromSet(labels.Set{"tier": "api"})
	web := labels.SelectorFromSet(labels.Set{"tier": "web"})
	// same fails the test unless both caches list the same objects, whole,
	// for every namespace and selector; want are the keys expected.
	same := func(ns string, sel labels.Selector, want ...string) {
		t.Helper()
		got, err := compact.List(ns, sel)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := plain.List(ns, sel)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(want)
		if !slices.Equal(podKeys(got), want) || !slices.Equal(podKeys(ref), want) {
			t.Fatalf("List(%q, %s): compact cache %v, default cache %v, want %v", ns, sel, podKeys(got), podKeys(ref), want)
		}
		slices.SortFunc(got, compareKeys)
		slices.SortFunc(ref, compareKeys)
		for i := range got {
			sameJSON(t, fmt.Sprintf("%s/%s listed by %s", got[i].Namespace, got[i].Name, sel), got[i], ref[i])
		}
	}
	same(ns1, api, ns1+"/pod-0", ns1+"/pod-2")
	same(ns2, web, ns2+"/pod-1", ns2+"/pod-3")
	same("", api, ns1+"/pod-0", ns1+"/pod-2", ns2+"/pod-0", ns2+"/pod-2")
	same(ns1, nil, ns1+"/pod-0", ns1+"/pod-1", ns1+"/pod-2", ns1+"/pod-3")

	// pod-0 leaves the selection, pod-1 enters it, pod-2 is deleted.
	setTier(t, ns1, "pod-0", "web")
	setTier(t, ns1, "pod-1", "api")
	err = kube(t).CoreV1().Pods(ns1).Delete(t.Context(), "pod-2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*generic.Cache[*corev1.Pod]{compact, plain} {
		controlplanetest.Eventually(t, time.Minute, "the label changes and the delete in the cache", func() bool {
			got, err := c.List(ns1, api)
			return err == nil && slices.Equal(podKeys(got), []string{ns1 + "/pod-1"})
		})
	}
	same(ns1, api, ns1+"/pod-1")
	same(ns1, web, ns1+"/pod-0", ns1+"/pod-3")
	same("", web, ns1+"/pod-0", ns1+"/pod-3", ns2+"/pod-1", ns2+"/pod-3")
}

func compareKeys(a, b *corev1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
