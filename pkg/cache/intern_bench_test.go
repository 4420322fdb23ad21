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

// BenchmarkDefaultCacheHeld is one cold start of a default (decoded)
// informer over 10,000 pods decoded from protobuf at each list, as the
// wire gives them (every string its own), with and without interning: the
// CPU of the sync (the walk's cost) and the heap the synced informer holds
// per pod (after two collections; the encoded list is held outside it).
func BenchmarkDefaultCacheHeld(b *testing.B) {
	const n = 10000
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: benchPods(n)}
	data, err := list.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	heap := func() uint64 {
		goruntime.GC()
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, interned := range []bool{true, false} {
		name := "plain"
		if interned {
			name = "interned"
		}
		b.Run(name, func(b *testing.B) {
			var held float64
			withCPU(b, func() {
				for b.Loop() {
					b.StopTimer()
					before := heap()
					b.StartTimer()
					ctx, cancel := context.WithCancel(context.Background())
					informer := decodingInformer(ctx, b, data, interned)
					b.StopTimer()
					held = float64(heap()-before) / n
					goruntime.KeepAlive(informer)
					cancel()
					b.StartTimer()
				}
			})
			b.ReportMetric(held, "held-B/pod")
		})
	}
}

// decodingInformer runs an informer that lists the pods encoded in data,
// decoding them at each list, until ctx ends, and returns it once synced.
func decodingInformer(ctx context.Context, b *testing.B, data []byte, interned bool) cache.SharedIndexInformer {
	lw := listOnly{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list := &corev1.PodList{}
			return list, list.Unmarshal(data)
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
	informer := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{
		Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}})
	opts := Options{}
	if interned {
		opts.interner = newInterner(maxInterned)
	}
	if err := informer.SetTransform(opts.transform()); err != nil {
		b.Fatal(err)
	}
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		b.Fatal("not synced")
	}
	return informer
}
