package cache_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// BenchmarkColdStartStreamInitialList measures a cold start of 10,000
// ConfigMaps of about 2 KB with and without StreamInitialList: the time
// from Start to the first handler call (first-handler-s) and to the sync
// (sync-s). The two run alternately, so both see the same load.
//
//	go test -run '^$' -bench ColdStartStreamInitialList -benchtime 3x ./pkg/cache/
func BenchmarkColdStartStreamInitialList(b *testing.B) {
	const n = 10000
	ns := controlplanetest.Namespace(b, cp.Config())
	createManyConfigMaps(b, ns, n)
	for _, compact := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			name := map[bool]string{false: "whole-list", true: "stream"}[stream]
			if compact {
				name = "compact-" + name
			}
			b.Run(name, func(b *testing.B) {
				var first, synced time.Duration
				var peak uint64
				for range b.N {
					r := coldStart(b, cache.Options{Namespace: ns, StreamInitialList: stream, Compact: compact}, n)
					first += r.first
					synced += r.synced
					peak = max(peak, r.peakHeap)
				}
				b.ReportMetric(first.Seconds()/float64(b.N), "first-handler-s")
				b.ReportMetric(synced.Seconds()/float64(b.N), "sync-s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

type coldStartResult struct {
	first, synced time.Duration
	peakHeap      uint64 // the largest live heap sampled from Start to sync
}

// peakHeap samples the heap's objects every millisecond until stop is
// closed, and sends the largest.
func peakHeap(stop <-chan struct{}, peak chan<- uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var most uint64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(sample)
		most = max(most, sample[0].Value.Uint64())
		select {
		case <-stop:
			peak <- most
			return
		case <-tick.C:
		}
	}
}

// coldStart starts a factory of one ConfigMap informer and returns the
// time to its first handler call and to its sync with all n objects
// handed to the handler.
func coldStart(b *testing.B, opts cache.Options, n int) coldStartResult {
	b.Helper()
	goruntime.GC()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		b.Fatal(err)
	}
	f := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: opts,
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		b.Fatal(err)
	}
	var handled atomic.Int64
	firstAt := make(chan time.Time, 1)
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		if handled.Add(1) == 1 {
			firstAt <- time.Now()
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSampling, peak := make(chan struct{}), make(chan uint64, 1)
	go peakHeap(stopSampling, peak)
	start := time.Now()
	if err := f.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WaitForCacheSync(ctx); err != nil {
		b.Fatal(err)
	}
	for handled.Load() < int64(n) {
		time.Sleep(time.Millisecond) // a benchmark's wait; no assertion rides on it
	}
	synced := time.Since(start)
	close(stopSampling)
	return coldStartResult{first: (<-firstAt).Sub(start), synced: synced, peakHeap: <-peak}
}

// createManyConfigMaps creates n ConfigMaps of about 2 KB, 8 at a time.
func createManyConfigMaps(b *testing.B, ns string, n int) {
	b.Helper()
	data := map[string]string{}
	for k := range 16 {
		data[fmt.Sprintf("key-%02d", k)] = fmt.Sprintf("%0120d", k)
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.QPS, cfg.Burst = 1000, 1000 // client-go's default of 5 a second would take half an hour
	kc := kubernetes.NewForConfigOrDie(cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: data}
				if _, err := kc.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
