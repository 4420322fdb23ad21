package shard_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// writingMember is a ring member whose connections all go through one
// proxy and whose handler, on a ConfigMap whose data says go, merge-patches
// data.writer with its name (with a context that outlives the term), after
// calling before.
type writingMember struct {
	name  string
	proxy *controlplanetest.Proxy

	mu    sync.Mutex
	id    string
	ended []error // the patches' results
}

func (w *writingMember) ID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.id
}

func startWritingMember(t *testing.T, ring shard.Ring, name string, before func(*writingMember)) *writingMember {
	t.Helper()
	w := &writingMember{name: name}
	proxy, cfg := controlplanetest.NewProxy(t, cp().Config())
	w.proxy = proxy
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Timeout = renewDeadline
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = shard.Join(ctx, kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
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
			cms.OnChange(ctx, "write", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if cm == nil || cm.Data["go"] == "" || cm.Data["writer"] == name {
					return nil, nil
				}
				before(w)
				_, err := cms.Patch(context.Background(), cm.Namespace, cm.Name, types.MergePatchType, []byte(`{"data":{"writer":"`+name+`"}}`))
				w.mu.Lock()
				w.ended = append(w.ended, err)
				w.mu.Unlock()
				return nil, nil // not retried: the test looks at the first attempt
			})
			w.mu.Lock()
			w.id = m.ID()
			w.mu.Unlock()
			return f.Run(ctx, 2)
		}, leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() {
		proxy.Resume()
		cancel()
		<-done
	})
	eventually(t, name+"'s first term", func() bool { return w.ID() != "" })
	return w
}

// TestStalledMemberWriteNeverLandsAfterTheMove (issue 24, case 8): a
// member's connection stalls (lease and data alike) while its handler's
// patch of an object it holds is in flight; the member's Lease expires,
// the sharder moves the object to the other member, which handles and
// writes it; then the connection resumes. The stale patch must not land
// after the other member's write.
func TestStalledMemberWriteNeverLandsAfterTheMove(t *testing.T) {
	if os.Getenv("LARIAT_OPEN_DEFECTS") == "" {
		// Open defect (docs/safety.md, Not yet guaranteed): about one run in
		// twenty, a's stalled patch lands after b's write.
		t.Skip("open defect: a stalled member's patch lands after the move on some runs; LARIAT_OPEN_DEFECTS=1 runs it")
	}
	ns := controlplanetest.Namespace(t, cp().Config())
	ring := testRing(ns)
	kube := controlplanetest.Clientset(cp().Config())
	for i := range 10 {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var stallOnce sync.Once
	a := startWritingMember(t, ring, "a", func(w *writingMember) { stallOnce.Do(func() { w.proxy.Stall() }) })
	b := startWritingMember(t, ring, "b", func(*writingMember) {})
	runTestSharder(t, ring)
	// An object assigned to a, once every object is on its member.
	var target string
	eventually(t, "the ring settled", func() bool {
		l, err := kube.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		target = ""
		for _, cm := range l.Items {
			id := cm.Labels[shard.AssignmentLabel(ringName)]
			if id != shard.Pick(ns+"/"+cm.Name, []string{a.ID(), b.ID()}) || cm.Labels[shard.DrainLabel(ringName)] != "" {
				return false
			}
			if id == a.ID() {
				target = cm.Name
			}
		}
		return target != ""
	})

	w, err := kube.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + target})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var (
		histMu  sync.Mutex
		history []string
		ended   bool
	)
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Modified {
				histMu.Lock()
				if len(history) == 0 || history[len(history)-1] != cm.Data["writer"] {
					history = append(history, cm.Data["writer"])
				}
				ended = ended || cm.Data["end"] != ""
				histMu.Unlock()
			}
		}
	}()
	stalled := a.ID()
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), target, types.MergePatchType, []byte(`{"data":{"go":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's write", func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), target, metav1.GetOptions{})
		return err == nil && cm.Data["writer"] == "b"
	})
	a.proxy.Resume()
	eventually(t, "a's handler returning", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.ended) > 0
	})
	// a's next term reaches the API server through the resumed connection,
	// behind what the stall held back.
	eventually(t, "a joining again", func() bool { return a.ID() != stalled })
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), target, types.MergePatchType, []byte(`{"data":{"end":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the watch seeing the last write", func() bool {
		histMu.Lock()
		defer histMu.Unlock()
		return ended
	})
	histMu.Lock()
	seen := append([]string(nil), history...)
	histMu.Unlock()
	for i, v := range seen {
		if v == "a" && i > 0 && seen[i-1] == "b" {
			t.Errorf("a's patch, sent while it held the object, landed after b's write: the object's writers in order %q", seen)
		}
	}
	a.mu.Lock()
	t.Logf("a's patch: %v; writers in order: %q", a.ended[0], seen)
	a.mu.Unlock()
}

// runTestSharder runs the ring's sharder until the test ends.
func runTestSharder(t *testing.T, ring shard.Ring) {
	t.Helper()
	s, err := shard.NewSharder(cp().Config(), ring, shard.SharderOptions{Namespace: ring.Namespace, Logger: controlplanetest.QuietLogger(),
		RetryPeriod: retryPeriod, Leader: []leader.Option{leader.WithIdentity("sharder"), leader.WithLeaseDuration(leaseDuration),
			leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
