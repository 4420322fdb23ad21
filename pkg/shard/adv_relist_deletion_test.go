package shard

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

type advCMs = generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]

// advRelistMember joins ring on the API server of leaseCfg, its data
// through dataCfg, with one worker and a handler recorded in runs; it
// returns the member and its ConfigMap controller once the factory runs.
func advRelistMember(t *testing.T, ring Ring, label string, leaseCfg, dataCfg *rest.Config, runs *advRuns) (*Member, *advCMs) {
	t.Helper()
	m, err := NewMember(controlplanetest.Clientset(leaseCfg).CoordinationV1(), ring)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *advCMs, 1)
	controlplanetest.Run(t, func(ctx context.Context) error {
		return m.Run(ctx, func(ctx context.Context) error {
			opts := &generic.FactoryOptions{Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}}}
			f, err := generic.NewFactoryFromConfig(m.Fence(dataCfg), nil, m.FactoryOptions(dataCfg, opts))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				_, name, _ := splitKey(key)
				runs.add(advRun{member: label, name: name, gone: cm == nil})
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
		t.Fatalf("member %s did not start", label)
	}
	return nil, nil
}

// advWaitCompacted waits until a watch from resourceVersion is refused as
// too old (410), as the cut-off member's will be.
func advWaitCompacted(t *testing.T, kube kubernetes.Interface, ns, resourceVersion string) {
	t.Helper()
	controlplanetest.Eventually(t, 2*time.Minute, "resourceVersion "+resourceVersion+" compacted", func() bool {
		w, err := kube.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: resourceVersion})
		if err != nil {
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
		}
		defer w.Stop()
		select {
		case e := <-w.ResultChan():
			if e.Type == watch.Error {
				err := apierrors.FromObject(e.Object)
				return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
			}
		case <-time.After(200 * time.Millisecond):
		}
		return false
	})
}

// TestAdvRelistDeliversADeletionToAMemberThatLetTheObjectGo: member A
// acknowledges the drain of ConfigMap "moved" (the gate removes both
// labels), the object is assigned to member B, handled there, deleted, and
// B's handlers see the deletion. Later A's watch is cut off long enough to
// be compacted away, so A's informer is rebuilt and lists again. The
// controller then queues every key its handlers were once given and whose
// end they were not told of: "moved" among them, since the gate's refusal
// when it left A's cache did not forget it. The gate reads it, gets
// NotFound, and admits the pass: A's handlers are told of the deletion of
// an object A let go of before it was deleted, beside B's. ("A deletion
// reaches the handlers of the replica that held the object, no other.")
// Barrier: once A saw the deletion of its own "gone-in-gap" (queued by the
// same relist), an Enqueue of A's "kept" on A's single worker comes after
// the pass of "moved".
func TestAdvRelistDeliversADeletionToAMemberThatLetTheObjectGo(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{"--watch-cache=false", "--etcd-compaction-interval=1s"}})
	cfg := own.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	ring := Ring{Name: "advrelist", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	runs := &advRuns{}
	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	a, aCMs := advRelistMember(t, ring, "a", cfg, proxied, runs)
	b, _ := advRelistMember(t, ring, "b", cfg, cfg, runs)
	assign := AssignmentLabel(ring.Name)
	advCreateHandledByA(t, kube, ns, assign, a.ID(), runs)

	// The sharder's handover, by hand: drain, A acknowledges, assign to B.
	advHandOverByHand(t, kube, ns, ring, "moved", b.ID())
	controlplanetest.Eventually(t, time.Minute, "B handles moved", func() bool { return runs.count("b", "moved", false) > 0 })
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "moved", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "B sees moved deleted", func() bool { return runs.count("b", "moved", true) > 0 })
	if n := runs.count("a", "moved", true); n > 0 {
		t.Fatalf("A was told of the deletion of moved before the relist (%d runs)", n)
	}

	// A's watch is cut off and compacted away; A's own gone-in-gap is
	// deleted meanwhile.
	last, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "gone-in-gap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
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
		t.Fatalf("member A, which acknowledged the drain of ConfigMap %s/moved before it was assigned to B, handled there and deleted, ran its handlers %d time(s) for that deletion after its relist (B had been told already)", ns, n)
	}
}

// advCreateHandledByA creates the relist scenes' three ConfigMaps (moved,
// kept, gone-in-gap) assigned to member a (aID) and waits until a's
// handlers saw each.
func advCreateHandledByA(t *testing.T, kube kubernetes.Interface, ns, assign, aID string, runs *advRuns) {
	t.Helper()
	for _, name := range []string{"moved", "kept", "gone-in-gap"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{assign: aID}}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controlplanetest.Eventually(t, time.Minute, "A handles its three objects", func() bool {
		return runs.count("a", "moved", false) > 0 && runs.count("a", "kept", false) > 0 && runs.count("a", "gone-in-gap", false) > 0
	})
}

// advHandOverByHand does the sharder's handover of ConfigMap name to member
// to, by hand: marks its drain, waits for the holder's acknowledgement
// (the assignment label removed), then assigns it (label and trail).
func advHandOverByHand(t *testing.T, kube kubernetes.Interface, ns string, ring Ring, name, to string) {
	t.Helper()
	assign, drain := AssignmentLabel(ring.Name), DrainLabel(ring.Name)
	patch := func(body string) {
		t.Helper()
		if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(`{"metadata":{"labels":{"` + drain + `":"` + to + `"}}}`)
	controlplanetest.Eventually(t, time.Minute, "the holder acknowledges the drain of "+name, func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		return err == nil && cm.Labels[assign] == ""
	})
	patch(`{"metadata":{"labels":{"` + assign + `":"` + to + `"},"annotations":{"` + TrailAnnotation(ring.Name) + `":"` + to + `"}}}`)
}
