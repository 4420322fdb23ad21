package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// BenchmarkRebalance3000 measures how long a ring of 3,000 ConfigMaps
// takes to settle after a member joins two others (join: about 1,000
// objects drained from them and handled by it) and after a member is lost
// without releasing its Lease (loss: its objects handled by the two left,
// once its Lease expired). Settled: every object assigned to its Pick over
// the live members, no drain pending, and handled (marked) by its member.
// Each member's handler writes the ConfigMap once per member, as a real
// handler taking an object over would. One sharder runs apart from the
// members. Timing: lease 6 s, renew deadline 3 s, retry period 250 ms
// (TestThreeReplicasShareThreeThousandObjects'). Reported in s/join and
// s/loss, the mean over b.N.
func BenchmarkRebalance3000(b *testing.B) {
	const n = 3000
	var join, loss time.Duration
	for range b.N {
		ns := controlplanetest.Namespace(b, cp().Config())
		ring := shard.Ring{Name: ringName, Namespace: ns, Kinds: []shard.Kind{{GVK: configMapGVK}}}
		kube := controlplanetest.Clientset(cp().Config())
		benchConfigMaps(b, kube, ns, n)
		runBenchSharder(b, ring)
		m1, m2 := startBenchMember(b, ring, "m1"), startBenchMember(b, ring, "m2")
		waitBenchSettled(b, kube, ns, n, m1, m2)

		began := time.Now()
		m3 := startBenchMember(b, ring, "m3")
		waitBenchSettled(b, kube, ns, n, m1, m2, m3)
		join += time.Since(began)

		began = time.Now()
		m1.proxy.Cut() // no release: the Lease must expire
		m1.cancel()
		waitBenchSettled(b, kube, ns, n, m2, m3)
		loss += time.Since(began)
		for _, m := range []*benchMember{m1, m2, m3} {
			m.stop()
		}
	}
	b.ReportMetric(join.Seconds()/float64(b.N), "s/join")
	b.ReportMetric(loss.Seconds()/float64(b.N), "s/loss")
}

var benchTiming = []leader.Option{leader.WithLeaseDuration(6 * time.Second), leader.WithRenewDeadline(3 * time.Second),
	leader.WithRetryPeriod(250 * time.Millisecond), leader.WithLogger(controlplanetest.QuietLogger())}

// benchMember is a member of the benchmark's ring, every connection of it
// through a proxy.
type benchMember struct {
	name   string
	proxy  *controlplanetest.Proxy
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	id string // the current term's
}

func (m *benchMember) ID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.id
}

func (m *benchMember) stop() {
	m.cancel()
	<-m.done
}

func startBenchMember(b *testing.B, ring shard.Ring, name string) *benchMember {
	b.Helper()
	proxy, cfg := controlplanetest.NewProxy(b, cp().Config())
	cfg.QPS, cfg.Burst = 500, 1000
	ctx, cancel := context.WithCancel(context.Background())
	bm := &benchMember{name: name, proxy: proxy, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(bm.done)
		_ = shard.Join(ctx, kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
			return runBenchTerm(ctx, cfg, ring, m, bm)
		}, append([]leader.Option{leader.WithIdentity(name)}, benchTiming...)...)
	}()
	b.Cleanup(bm.stop)
	for bm.ID() == "" {
		time.Sleep(10 * time.Millisecond)
	}
	return bm
}

// runBenchTerm runs one term's factory: its handler marks each ConfigMap
// with the member's name.
func runBenchTerm(ctx context.Context, cfg *rest.Config, ring shard.Ring, m *shard.Member, bm *benchMember) error {
	f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	}))
	if err != nil {
		return err
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		return err
	}
	cms.OnChange(ctx, "mark", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Annotations[handledBy] == bm.name {
			return cm, nil
		}
		cm = cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[handledBy] = bm.name
		return cms.Update(ctx, cm)
	})
	bm.mu.Lock()
	bm.id = m.ID()
	bm.mu.Unlock()
	return f.Run(ctx, 4)
}

// runBenchSharder runs the ring's sharder until the benchmark ends.
func runBenchSharder(b *testing.B, ring shard.Ring) {
	b.Helper()
	cfg := cp().Config()
	cfg.QPS, cfg.Burst = 500, 1000
	s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{Namespace: ring.Namespace, Logger: controlplanetest.QuietLogger(),
		RetryPeriod: 250 * time.Millisecond, Leader: append([]leader.Option{leader.WithIdentity("sharder")}, benchTiming...)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})
}

// benchConfigMaps creates n ConfigMaps in ns, eight at a time.
func benchConfigMaps(b *testing.B, kube kubernetes.Interface, ns string, n int) {
	b.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}}, metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// waitBenchSettled waits until every one of ns's n ConfigMaps is assigned
// to its Pick over ms' current IDs, with no drain pending, and marked by
// that member.
func waitBenchSettled(b *testing.B, kube kubernetes.Interface, ns string, n int, ms ...*benchMember) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		byID := map[string]string{}
		var ids []string
		for _, m := range ms {
			byID[m.ID()] = m.name
			ids = append(ids, m.ID())
		}
		l, err := kube.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		settled := 0
		for _, cm := range l.Items {
			id := cm.Labels[shard.AssignmentLabel(ringName)]
			if id == shard.Pick(ns+"/"+cm.Name, ids) && cm.Labels[shard.DrainLabel(ringName)] == "" && cm.Annotations[handledBy] == byID[id] {
				settled++
			}
		}
		if settled == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("after 5m, %d of %d ConfigMaps settled", settled, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
