package cache

import (
	"context"
	"fmt"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// benchPod is a Pod shaped like scripts/bench/compare's pods workload
// (somewhat smaller): two containers and an init container with env
// variables, probes, resources, mounts and security contexts, volumes,
// tolerations, affinity, an owner, and a kubelet's status.
func benchPod(i int) corev1.Pod {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	container := func(name string, envs int) corev1.Container {
		c := corev1.Container{Name: name, Image: "registry.example.com/shop/" + name + ":v1.14.2", Resources: res,
			Args:         []string{"--config=/etc/shop/config.yaml", "--log-format=json"},
			Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/shop", ReadOnly: true}, {Name: "cache", MountPath: "/var/cache"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/ready"}},
				PeriodSeconds: 10, TimeoutSeconds: 2, FailureThreshold: 3},
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/live"}},
				InitialDelaySeconds: 15, PeriodSeconds: 10, TimeoutSeconds: 2, FailureThreshold: 3},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(bool), ReadOnlyRootFilesystem: new(bool),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}
		for e := range envs {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%02d", e), Value: fmt.Sprintf("value-of-setting-%02d-for-the-benchmark", e)})
		}
		return c
	}
	at := metav1.Unix(1790000000, 0)
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "bench", ResourceVersion: fmt.Sprint(100 + i),
			UID: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b",
			// shard sets one pod in 100 apart, for the selected lists.
			Labels: map[string]string{"app": "bench", "app.kubernetes.io/name": "shop", "pod-template-hash": "7d9f8b6c5d",
				"shard": fmt.Sprint(i % 100)},
			Annotations: map[string]string{"sidecar.istio.io/status": `{"initContainers":null,"containers":["istio-proxy"],"volumes":["workload-socket","credential-socket","workload-certs","istio-envoy","istio-data","istio-podinfo","istio-token","istiod-ca-cert"],"revision":"default"}`,
				"prometheus.io/scrape": "true", "prometheus.io/port": "15020", "prometheus.io/path": "/stats/prometheus"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "shop-api-7d9f8b6c5d", UID: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4c"}},
		},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%03d", i%100), ServiceAccountName: "shop-api",
			InitContainers: []corev1.Container{container("init-schema", 2)},
			Containers:     []corev1.Container{container("api", 8), container("istio-proxy", 2)},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "shop-config"}}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "shop-api-tls"}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "shop"}}}}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", StartTime: &at,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "api", Ready: true, Image: "registry.example.com/shop/api:v1.14.2", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}},
				{Name: "istio-proxy", Ready: true, Image: "docker.io/istio/proxyv2:1.24.1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}},
			}},
	}
}

// benchPods returns n pods of benchPod's shape.
func benchPods(n int) []corev1.Pod {
	items := make([]corev1.Pod, n)
	for i := range items {
		items[i] = benchPod(i)
	}
	return items
}

// syncedInformer returns a running informer over n pods held in memory,
// compact or not, built the way the factory builds its informers, with the
// namespace index every typed controller adds; it runs until b ends.
func syncedInformer(b *testing.B, n int, compact bool) *restartableInformer {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return runInformer(ctx, b, benchPods(n), compact)
}

// runInformer runs an informer over items until ctx ends, and returns it
// once synced.
func runInformer(ctx context.Context, b *testing.B, items []corev1.Pod, compact bool) *restartableInformer {
	// Listed, not streamed: the fake watch never sends the bookmark that
	// ends a stream of initial events.
	lw := listOnly{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: items}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
	var c *codec
	if compact {
		var err error
		if c, err = newCodec(&corev1.Pod{}, 0); err != nil {
			b.Fatal(err)
		}
	}
	informer, err := newRestartableInformer(func(indexers cache.Indexers) (cache.SharedIndexInformer, error) {
		i := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{Indexers: cache.Indexers{}})
		return i, i.SetTransform(c.compacting(StripMetadata))
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

// withCPU runs a benchmark's loop and reports the CPU time the process
// spent in it per operation (all threads, the collector's included): on a
// machine shared with other jobs, the wall time varies with their load, the
// CPU time much less.
func withCPU(b *testing.B, loop func()) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	loop()
	if b.N > 0 {
		b.ReportMetric(float64((cpu()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func getPod(b *testing.B, store cache.Store, key string) *corev1.Pod {
	obj, ok, err := store.GetByKey(key)
	if err != nil || !ok {
		b.Fatalf("%s: %v, %v", key, ok, err)
	}
	return obj.(*corev1.Pod)
}

// BenchmarkCompactGet is a typed Get from a store of 10,000 pods: of a key
// read recently (hot), of keys not read for a while (cold: each a decode),
// and, for comparison, from the default store of decoded objects.
func BenchmarkCompactGet(b *testing.B) {
	const n = 10000
	b.Run("hot", func(b *testing.B) {
		store := syncedInformer(b, n, true).GetStore()
		getPod(b, store, "bench/pod-00042")
		withCPU(b, func() {
			for b.Loop() {
				getPod(b, store, "bench/pod-00042")
			}
		})
	})
	b.Run("cold", func(b *testing.B) {
		store := syncedInformer(b, n, true).GetStore()
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("bench/pod-%05d", i)
		}
		i := 0
		withCPU(b, func() {
			for b.Loop() {
				// n keys in turn through a hot set of DefaultHotObjects: every read misses.
				getPod(b, store, keys[i%n])
				i++
			}
		})
	})
	b.Run("default-store", func(b *testing.B) {
		store := syncedInformer(b, n, false).GetStore()
		withCPU(b, func() {
			for b.Loop() {
				getPod(b, store, "bench/pod-00042")
			}
		})
	})
}

// BenchmarkCompactList is a List of 10,000 pods from a compact store (each
// decoded, but for the hot ones) and from the default store.
func BenchmarkCompactList(b *testing.B) {
	const n = 10000
	for _, compact := range []bool{true, false} {
		name := "default-store"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			store := syncedInformer(b, n, compact).GetStore()
			withCPU(b, func() {
				for b.Loop() {
					if got := len(store.List()); got != n {
						b.Fatalf("listed %d pods, want %d", got, n)
					}
				}
			})
		})
	}
}

// BenchmarkCompactListMetadata is ListMetadata of 10,000 pods from a compact
// store (no decode: the metadata kept beside each encoded pod) and from the
// default store, to set beside BenchmarkCompactList.
func BenchmarkCompactListMetadata(b *testing.B) {
	const n = 10000
	for _, compact := range []bool{true, false} {
		name := "default-store"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			store := syncedInformer(b, n, compact).GetStore()
			withCPU(b, func() {
				for b.Loop() {
					ms, err := ListMetadata(store)
					if err != nil || len(ms) != n {
						b.Fatalf("listed %d pods' metadata (%v), want %d", len(ms), err, n)
					}
				}
			})
		})
	}
}

// BenchmarkCompactSize reports what a compact store holds per pod (the
// encoded bytes) and what decoding one allocates.
func BenchmarkCompactSize(b *testing.B) {
	c, err := newCodec(&corev1.Pod{}, 0)
	if err != nil {
		b.Fatal(err)
	}
	pod := benchPod(1)
	stored, err := c.encode(&pod)
	if err != nil {
		b.Fatal(err)
	}
	o := stored.(*compactObject)
	b.ReportAllocs()
	withCPU(b, func() {
		for b.Loop() {
			o.hot.Store(nil)
			if _, err := o.object(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(len(o.data)), "encoded-B/pod")
}

// BenchmarkCompactSync is one cold start of an informer over 10,000 pods
// (listed from memory, so only the informer's own work is measured: the
// transform, the store, the namespace index), compact or not.
func BenchmarkCompactSync(b *testing.B) {
	items := benchPods(10000)
	for _, compact := range []bool{true, false} {
		name := "default-store"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			withCPU(b, func() {
				for b.Loop() {
					ctx, cancel := context.WithCancel(context.Background())
					runInformer(ctx, b, items, compact)
					cancel()
				}
			})
		})
	}
}

// BenchmarkCompactListSelected is the List a typed cache makes for a label
// selector that matches one pod in 100, from 10,000 pods.
func BenchmarkCompactListSelected(b *testing.B) {
	const n = 10000
	sel := labels.SelectorFromSet(labels.Set{"shard": "7"})
	for _, compact := range []bool{true, false} {
		name := "default-store"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			store := syncedInformer(b, n, compact).GetIndexer()
			withCPU(b, func() {
				for b.Loop() {
					if got := len(listSelected(b, store, sel)); got != n/100 {
						b.Fatalf("listed %d pods, want %d", got, n/100)
					}
				}
			})
		})
	}
}

// listSelected lists as pkg/generic's Cache.List does for all namespaces:
// through the store's ListSelected.
func listSelected(b *testing.B, store cache.Indexer, sel labels.Selector) []*corev1.Pod {
	items, err := store.(SelectingIndexer).ListSelected("", sel)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]*corev1.Pod, 0, len(items))
	for _, item := range items {
		out = append(out, item.(*corev1.Pod))
	}
	return out
}

// BenchmarkCompactHeld reports the heap a synced compact informer over
// 10,000 pods holds per pod (after two collections; the pods it listed are
// held outside it, so what it holds is the stored form, its keys and its
// indexes).
func BenchmarkCompactHeld(b *testing.B) {
	const n = 10000
	items := benchPods(n)
	heap := func() uint64 {
		goruntime.GC()
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var held float64
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		before := heap()
		informer := runInformer(ctx, b, items, true)
		held = float64(heap()-before) / n
		goruntime.KeepAlive(informer)
		cancel()
	}
	b.ReportMetric(held, "held-B/pod")
}
