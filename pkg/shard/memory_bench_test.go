package shard_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// BenchmarkReplicaMemory measures what one replica's ConfigMap cache holds
// when 3,000 ConfigMaps of 4 KiB each are spread over 1, 2 and 3 replicas:
// the heap the replica's synced factory adds (after a GC), and the objects
// it caches. The objects carry one assignment label per ring, as a sharder
// of each would write it, so that the three cases read the same objects.
func BenchmarkReplicaMemory(b *testing.B) {
	const n = 3000
	ns := controlplanetest.Namespace(b, cp().Config())
	rings := map[int]string{1: "one", 2: "two", 3: "three"}
	// The members of each ring (their IDs are drawn by NewMember); the
	// first is the one measured.
	members := map[int][]*shard.Member{}
	ids := map[int][]string{}
	for k, name := range rings {
		ring := shard.Ring{Name: name, Namespace: ns, Kinds: []shard.Kind{{GVK: configMapGVK}}}
		for i := range k {
			m, err := shard.NewMember(kubernetes.NewForConfigOrDie(cp().Config()).CoordinationV1(), ring, leader.WithIdentity(fmt.Sprintf("replica-%d", i)))
			if err != nil {
				b.Fatal(err)
			}
			members[k] = append(members[k], m)
			ids[k] = append(ids[k], m.ID())
		}
	}
	c := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	payload := strings.Repeat("x", 4096)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		labels := map[string]string{}
		for k, ring := range rings {
			labels[shard.AssignmentLabel(ring)] = shard.Pick(ns+"/"+name, ids[k])
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Data: map[string]string{"payload": payload}}, metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	for _, k := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("replicas=%d", k), func(b *testing.B) {
			m := members[k][0]
			// The median: a list response or a previous run's informer
			// still shutting down can land in one measurement.
			heaps := make([]float64, 0, b.N)
			objects := 0
			for range b.N {
				h, o := replicaHeap(b, m, ns)
				heaps = append(heaps, h)
				objects = o
			}
			slices.Sort(heaps)
			b.ReportMetric(heaps[len(heaps)/2]/(1<<20), "heap-MiB/replica")
			b.ReportMetric(float64(objects), "objects/replica")
		})
	}
}

// replicaHeap starts a factory set up by m for ConfigMaps, waits for its
// cache to sync, and returns the heap it added and the objects it cached.
func replicaHeap(b *testing.B, m *shard.Member, ns string) (float64, int) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	f, err := generic.NewFactoryFromConfig(cp().Config(), nil, m.FactoryOptions(cp().Config(), &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	}))
	if err != nil {
		b.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Start(ctx, 1); err != nil {
		b.Fatal(err)
	}
	for !cms.Informer().HasSynced() {
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	objects := len(cms.Informer().GetStore().ListKeys())
	// The informers let go of their stores a moment after the context
	// ends; the next measurement starts once they did.
	cancel()
	var released runtime.MemStats
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		runtime.GC()
		runtime.ReadMemStats(&released)
		if released.HeapAlloc < before.HeapAlloc+(after.HeapAlloc-before.HeapAlloc)/10 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("a stopped replica's factory still holds %d of the %d bytes it took after 10s", released.HeapAlloc-before.HeapAlloc, after.HeapAlloc-before.HeapAlloc)
		}
	}
	return float64(after.HeapAlloc) - float64(before.HeapAlloc), objects
}
