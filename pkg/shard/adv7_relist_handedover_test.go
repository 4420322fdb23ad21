package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// advCutOnDrainMember is advRelistMember with the gate's requests made
// straight to the API server (gateCfg) and its data through dataCfg, and
// the gate wrapped so that cut runs once, before the gate decides on the
// first cached object of the given name that carries a drain label: the
// member's watch breaks before its acknowledgement's event reaches it.
func advCutOnDrainMember(t *testing.T, ring Ring, leaseCfg, gateCfg, dataCfg *rest.Config, runs *advRuns, name string, cut func()) (*Member, *advCMs) {
	t.Helper()
	m, err := NewMember(controlplanetest.Clientset(leaseCfg).CoordinationV1(), ring)
	if err != nil {
		t.Fatal(err)
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	var once sync.Once
	started := make(chan *advCMs, 1)
	controlplanetest.Run(t, func(ctx context.Context) error {
		return m.Run(ctx, func(ctx context.Context) error {
			opts := m.FactoryOptions(gateCfg, &generic.FactoryOptions{Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}}})
			inner := opts.Controller.KindGates[gvk]
			opts.Controller.KindGates[gvk] = controller.GateFunc(func(ctx context.Context, key string, obj runtime.Object) (bool, error) {
				if o, err := meta.Accessor(obj); err == nil && obj != nil && o.GetName() == name && o.GetLabels()[DrainLabel(ring.Name)] != "" {
					once.Do(cut)
				}
				return inner.Admit(ctx, key, obj)
			})
			f, err := generic.NewFactoryFromConfig(m.Fence(dataCfg), nil, opts)
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](gvk, "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				_, n, _ := splitKey(key)
				runs.add(advRun{member: "a", name: n, gone: cm == nil})
				return cm, nil
			})
			if err := f.Start(ctx, 1); err != nil {
				return err
			}
			started <- cms
			<-ctx.Done()
			return f.Wait(context.WithoutCancel(ctx))
		})
	})
	select {
	case cms := <-started:
		return m, cms
	case <-time.After(2 * time.Minute):
		t.Fatal("member a did not start")
	}
	return nil, nil
}

// TestAdv7RelistAfterAnAcknowledgementDoesNotDeliverTheDeletion: member A
// acknowledges the drain of "moved", and its watch breaks before the
// acknowledgement's event (which takes the object out of its cache)
// reaches it. The object is assigned to B, handled there and deleted. A's
// watch is compacted away, so A lists again; its controller queues the
// key it held whose end its handlers were not told of. The gate must
// refuse that pass without reading (A handed the object over), not read
// NotFound and run A's deletion handlers beside B's. Barrier as in
// TestAdvRelistDeliversADeletionToAMemberThatLetTheObjectGo.
func TestAdv7RelistAfterAnAcknowledgementDoesNotDeliverTheDeletion(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{"--watch-cache=false", "--etcd-compaction-interval=1s"}})
	cfg := own.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	ring := Ring{Name: "advrelistack", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	runs := &advRuns{}
	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	a, aCMs := advCutOnDrainMember(t, ring, cfg, cfg, proxied, runs, "moved", proxy.Cut)
	b, _ := advRelistMember(t, ring, "b", cfg, cfg, runs)
	assign := AssignmentLabel(ring.Name)
	advCreateHandledByA(t, kube, ns, assign, a.ID(), runs)
	last, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The sharder's handover, by hand; A's watch breaks as its gate sees
	// the drain, before it acknowledges.
	advHandOverByHand(t, kube, ns, ring, "moved", b.ID())
	controlplanetest.Eventually(t, time.Minute, "B handles moved", func() bool { return runs.count("b", "moved", false) > 0 })
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "moved", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "gone-in-gap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "B sees moved deleted", func() bool { return runs.count("b", "moved", true) > 0 })
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bystander"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	advWaitCompacted(t, kube, ns, last.ResourceVersion)
	proxy.Restore()
	controlplanetest.Eventually(t, 2*time.Minute, "A sees gone-in-gap deleted (after its relist)", func() bool {
		return runs.count("a", "gone-in-gap", true) > 0
	})
	keptBefore := runs.count("a", "kept", false)
	aCMs.Enqueue(ns, "kept")
	controlplanetest.Eventually(t, time.Minute, "A handles kept again", func() bool { return runs.count("a", "kept", false) > keptBefore })
	if n := runs.count("a", "moved", true); n > 0 {
		t.Fatalf("member A, which acknowledged the drain of ConfigMap %s/moved (its watch broke before the acknowledgement's event reached it), "+
			"ran its handlers %d time(s) for its deletion after its relist, although B held it when it went and was told", ns, n)
	}
}
