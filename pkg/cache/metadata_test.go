package cache_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// metaLines renders what ListMetadata guarantees of each object (namespace,
// name, resourceVersion, labels), sorted, so two caches' answers compare.
func metaLines(t *testing.T, store toolscache.Store) []string {
	t.Helper()
	ms, err := cache.ListMetadata(store)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 0, len(ms))
	for _, m := range ms {
		lines = append(lines, fmt.Sprintf("%s/%s rv=%s labels=%v", m.GetNamespace(), m.GetName(), m.GetResourceVersion(), m.GetLabels()))
	}
	slices.Sort(lines)
	return lines
}

// TestCompactCacheListsMetadataWithoutDecoding shows that ListMetadata of a
// compact cache answers what it answers on the default cache (namespace,
// name, resourceVersion and labels of every object), before and after a
// label change and a delete, and that it decodes nothing: no answer is the
// decoded Pod, only the metadata kept beside the encoded one.
func TestCompactCacheListsMetadataWithoutDecoding(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		applyPod(t, ns, fmt.Sprintf("pod-%d", i), "first")
	}
	setTier(t, ns, "pod-1", "web")
	opts := cache.Options{Namespace: ns}
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
	startAndSync(t, compactFactory)
	startAndSync(t, plainFactory)

	same := func(wantObjects int) {
		t.Helper()
		got, ref := metaLines(t, compactInformer.GetStore()), metaLines(t, plainInformer.GetStore())
		if !slices.Equal(got, ref) || len(got) != wantObjects {
			t.Fatalf("ListMetadata: compact cache\n%v\ndefault cache\n%v\nwant %d objects alike", got, ref, wantObjects)
		}
		ms, err := cache.ListMetadata(compactInformer.GetStore())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if _, decoded := m.(*corev1.Pod); decoded {
				t.Fatalf("ListMetadata of a compact cache decoded %s/%s", m.GetNamespace(), m.GetName())
			}
		}
	}
	same(3)

	setTier(t, ns, "pod-0", "web")
	err = kube(t).CoreV1().Pods(ns).Delete(t.Context(), "pod-2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	for _, inf := range []toolscache.SharedIndexInformer{compactInformer, plainInformer} {
		controlplanetest.Eventually(t, time.Minute, "the label change and the delete in the cache", func() bool {
			ms, err := cache.ListMetadata(inf.GetStore())
			if err != nil || len(ms) != 2 {
				return false
			}
			for _, m := range ms {
				if m.GetName() == "pod-0" && m.GetLabels()["tier"] == "web" {
					return true
				}
			}
			return false
		})
	}
	same(2)
}
