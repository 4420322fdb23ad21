package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// metaEvents records what a metadata-only informer's handler is given.
type metaEvents struct {
	mu      sync.Mutex
	adds    map[string]*metav1.PartialObjectMetadata
	deletes map[string]*metav1.PartialObjectMetadata
	bad     []string // objects of any other type
}

func (e *metaEvents) record(into func() map[string]*metav1.PartialObjectMetadata, obj any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		e.bad = append(e.bad, fmt.Sprintf("%T", obj))
		return
	}
	into()[m.Namespace+"/"+m.Name] = m
}

// TestMetadataOnlyCacheHoldsMetadataAndReadsThrough shows a MetadataOnly
// kind's informer on the real API server: its store and handlers hold
// *metav1.PartialObjectMetadata stamped with the kind (labels, owners,
// annotations, no managedFields) and nothing of the spec; GetFull reads the
// whole Pod, reads it again once the cache saw an update (never the older
// one it kept), and answers NotFound once the cache saw the delete.
func TestMetadataOnlyCacheHoldsMetadataAndReadsThrough(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyPod(t, ns, "pod-0", "first")
	applyPod(t, ns, "pod-1", "first")
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{podGVK: {MetadataOnly: ptr.To(true)}}})
	informer, err := f.ForKind(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	if !cache.IsMetadataOnly(informer) {
		t.Fatal("IsMetadataOnly: false for a MetadataOnly kind")
	}
	events := &metaEvents{adds: map[string]*metav1.PartialObjectMetadata{}, deletes: map[string]*metav1.PartialObjectMetadata{}}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			events.record(func() map[string]*metav1.PartialObjectMetadata { return events.adds }, obj)
		},
		DeleteFunc: func(obj any) {
			events.record(func() map[string]*metav1.PartialObjectMetadata { return events.deletes }, obj)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)

	items := informer.GetStore().List()
	if len(items) != 2 {
		t.Fatalf("the cache holds %d objects, want 2", len(items))
	}
	for _, item := range items {
		m, ok := item.(*metav1.PartialObjectMetadata)
		if !ok {
			t.Fatalf("the cache holds a %T, want *metav1.PartialObjectMetadata", item)
		}
		if m.GroupVersionKind() != podGVK || m.Labels["app"] != "shop" || len(m.OwnerReferences) != 1 ||
			m.Annotations["note"] != "first" || m.ManagedFields != nil || m.UID == "" {
			t.Fatalf("cached metadata: %+v", m)
		}
	}

	key := ns + "/pod-0"
	full := getFullPod(t, f, ns, "pod-0")
	if len(full.Spec.Containers) != 1 || full.Spec.Containers[0].Image != "registry.example.com/api:v1" ||
		full.Status.PodIP != "10.1.2.3" || full.ManagedFields != nil || full.Annotations["note"] != "first" {
		t.Fatalf("GetFull: not the whole, stripped Pod: %+v", full)
	}
	cachedRV := cachedMeta(t, informer, key).ResourceVersion
	if full.ResourceVersion != cachedRV {
		t.Fatalf("GetFull read resourceVersion %s, the cache holds %s", full.ResourceVersion, cachedRV)
	}

	applyPod(t, ns, "pod-0", "second")
	controlplanetest.Eventually(t, time.Minute, "the update in the cache", func() bool {
		return cachedMeta(t, informer, key).Annotations["note"] == "second"
	})
	full = getFullPod(t, f, ns, "pod-0")
	if full.Annotations["note"] != "second" || full.ResourceVersion != cachedMeta(t, informer, key).ResourceVersion {
		t.Fatalf("GetFull after the cache saw the update: note %q rv %s, cache rv %s",
			full.Annotations["note"], full.ResourceVersion, cachedMeta(t, informer, key).ResourceVersion)
	}

	err = kube(t).CoreV1().Pods(ns).Delete(t.Context(), "pod-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the delete handed to the handler", func() bool {
		events.mu.Lock()
		defer events.mu.Unlock()
		return events.deletes[ns+"/pod-1"] != nil
	})
	if _, err := f.GetFull(t.Context(), podGVK, ns, "pod-1"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetFull of a pod the cache saw deleted: %v, want NotFound", err)
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.adds) != 2 || len(events.bad) > 0 {
		t.Fatalf("handler: adds %v, other types %v", events.adds, events.bad)
	}
	if d := events.deletes[ns+"/pod-1"]; d.GroupVersionKind() != podGVK {
		t.Fatalf("the delete's object is a %s", d.GroupVersionKind())
	}
}

func getFullPod(t *testing.T, f *cache.SharedCacheFactory, ns, name string) *corev1.Pod {
	t.Helper()
	obj, err := f.GetFull(t.Context(), podGVK, ns, name)
	if err != nil {
		t.Fatalf("GetFull %s/%s: %v", ns, name, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		t.Fatalf("GetFull gave a %T", obj)
	}
	return pod
}

func cachedMeta(t *testing.T, informer toolscache.SharedIndexInformer, key string) *metav1.PartialObjectMetadata {
	t.Helper()
	obj, ok, err := informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		t.Fatalf("%s not in the cache (err %v)", key, err)
	}
	return obj.(*metav1.PartialObjectMetadata)
}

// TestMetadataOnlyKindWithoutCRD shows that a MetadataOnly kind whose CRD
// is not installed never reads as "nothing exists": the sync fails naming
// the kind and why, and GetFull answers NotSynced, not NotFound.
func TestMetadataOnlyKindWithoutCRD(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	missing := schema.GroupVersionKind{Group: "missing.lariat.dev", Version: "v1", Kind: "Absent"}
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{missing: {MetadataOnly: ptr.To(true)}}})
	if _, err := f.ForKind(missing); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "a list failure recorded", func() bool {
		return f.WatchHealth()[missing].LastError != nil
	})
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Second)
	defer cancelSync()
	_, err := f.WaitForCacheSync(syncCtx)
	var syncErr *cache.SyncError
	if !errors.As(err, &syncErr) || !strings.Contains(err.Error(), "missing.lariat.dev/v1/Absent") {
		t.Fatalf("WaitForCacheSync: %v, want a SyncError naming the kind", err)
	}
	t.Logf("sync error: %v", err)
	if _, err := f.GetFull(t.Context(), missing, ns, "x"); !cache.IsNotSynced(err) {
		t.Fatalf("GetFull of an unsynced kind: %v, want NotSynced", err)
	}
}

// BenchmarkGetFull reports what a read of a whole Pod costs from a
// MetadataOnly kind on the test API server: hot (the object GetFull kept,
// whose resourceVersion the cache has: a map lookup), cold (a GET each
// time: two pods read in turn with one kept), and, beside them, a Get of a
// default cache's store.
func BenchmarkGetFull(b *testing.B) {
	ns := controlplanetest.Namespace(b, cp.Config())
	for _, name := range []string{"pod-0", "pod-1"} {
		applyPod(b, ns, name, "bench")
	}
	factory := func(kind cache.KindOptions) *cache.SharedCacheFactory {
		f := newCacheFactory(b, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
			Kinds: map[schema.GroupVersionKind]cache.KindOptions{podGVK: kind}})
		if _, err := f.ForKind(podGVK); err != nil {
			b.Fatal(err)
		}
		startAndSync(b, f)
		return f
	}
	read := func(b *testing.B, f *cache.SharedCacheFactory, names ...string) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := f.GetFull(b.Context(), podGVK, ns, names[i%len(names)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("hot", func(b *testing.B) { read(b, factory(cache.KindOptions{MetadataOnly: ptr.To(true)}), "pod-0") })
	b.Run("cold", func(b *testing.B) {
		read(b, factory(cache.KindOptions{MetadataOnly: ptr.To(true), FullObjects: ptr.To(1)}), "pod-0", "pod-1")
	})
	b.Run("default-store", func(b *testing.B) { read(b, factory(cache.KindOptions{}), "pod-0") })
}
