package cache

import (
	"context"
	goruntime "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// heldHeap is the live heap after two collections.
func heldHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// runListed runs, until ctx ends, an informer over what newList returns
// (a fresh list on every call, so that nothing outside the informer holds
// its objects), with the factory's transform for opts and, when c is set,
// compact; it returns the informer once synced.
func runListed(ctx context.Context, b *testing.B, obj runtime.Object, newList func() runtime.Object, opts Options, c *codec) *restartableInformer {
	lw := listOnly{&cache.ListWatch{
		ListWithContextFunc:  func(context.Context, metav1.ListOptions) (runtime.Object, error) { return newList(), nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
	informer, err := newRestartableInformer(func(cache.Indexers) (cache.SharedIndexInformer, error) {
		i := cache.NewSharedIndexInformerWithOptions(lw, obj, cache.SharedIndexInformerOptions{Indexers: cache.Indexers{}})
		return i, i.SetTransform(c.compacting(opts.transform()))
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	informer.codec = c
	informer.decodeFailed = func(err error) { b.Error(err) }
	if err := informer.AddIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}); err != nil {
		b.Fatal(err)
	}
	if _, err := informer.start(ctx); err != nil {
		b.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		b.Fatal("not synced")
	}
	return informer
}

// BenchmarkMetadataOnlyHeld reports the heap a synced informer over 10,000
// pods of the realistic shape (benchPod, managedFields included) holds per
// pod: MetadataOnly (listed as the API server sends it,
// PartialObjectMetadata), the default store, and compact. The list is
// made afresh inside the informer's list call and dropped after it, so
// what is counted is all the informer keeps: stored objects, keys, the
// namespace index.
func BenchmarkMetadataOnlyHeld(b *testing.B) {
	const n = 10000
	podList := func() runtime.Object {
		return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: benchPods(n)}
	}
	metaList := func() runtime.Object {
		pods := benchPods(n)
		items := make([]metav1.PartialObjectMetadata, n)
		for i := range pods {
			items[i] = metav1.PartialObjectMetadata{ObjectMeta: pods[i].ObjectMeta}
		}
		return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: items}
	}
	codec, err := newCodec(&corev1.Pod{}, 0)
	if err != nil {
		b.Fatal(err)
	}
	metaOpts := Options{meta: &metaLister{gvk: corev1.SchemeGroupVersion.WithKind("Pod")}}
	run := map[string]func(ctx context.Context) *restartableInformer{
		"metadata-only": func(ctx context.Context) *restartableInformer {
			return runListed(ctx, b, &metav1.PartialObjectMetadata{}, metaList, metaOpts, nil)
		},
		"default-store": func(ctx context.Context) *restartableInformer {
			return runListed(ctx, b, &corev1.Pod{}, podList, Options{}, nil)
		},
		"compact": func(ctx context.Context) *restartableInformer {
			return runListed(ctx, b, &corev1.Pod{}, podList, Options{}, codec)
		},
	}
	for _, name := range []string{"metadata-only", "default-store", "compact"} {
		b.Run(name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				before := heldHeap()
				informer := run[name](ctx)
				held = float64(heldHeap()-before) / n
				goruntime.KeepAlive(informer)
				cancel()
			}
			b.ReportMetric(held, "held-B/pod")
		})
	}
}
