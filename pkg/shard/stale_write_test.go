package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
// data.writer with its name and the term's member ID, "name/ID" (with a
// context that outlives the term), after calling before.
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
				me := name + "/" + m.ID()
				if cm == nil || cm.Data["go"] == "" || cm.Data["writer"] == me {
					return nil, nil
				}
				before(w)
				_, err := cms.Patch(context.Background(), cm.Namespace, cm.Name, types.MergePatchType, []byte(`{"data":{"writer":"`+me+`"}}`))
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
// writes it; then the connection resumes, and the stalled patch reaches the
// API server. The stale patch must not land after the move.
//
// Every write names its writer's term (name/member ID), and every version
// of the object the watch sees says which term it is assigned to. A
// member's handler writes only a copy assigned to its term, conditional on
// that copy's version, so a write of a term lands only on a version still
// assigned to that term: the test fails for each write seen on a version
// assigned to another term (or to none). Once the connection resumes, a
// comes back under a new ID, and the sharder may rightly move the object
// to that new term, whose handler writes it again: a write of a's new term
// on a version assigned to it is no stale write. (Until this test named
// the terms, it read such a write as the stalled patch landing, and failed
// in about one run in twenty.)
func TestStalledMemberWriteNeverLandsAfterTheMove(t *testing.T) {
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
	target := settledOn(t, ns, a, b)

	versions := watchVersions(t, ns, target)
	stalled := a.ID()
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), target, types.MergePatchType, []byte(`{"data":{"go":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's write", func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), target, metav1.GetOptions{})
		return err == nil && strings.HasPrefix(cm.Data["writer"], "b/")
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
	seen := versions.untilEnd(t)
	sawB := false
	for i, v := range seen {
		if i > 0 && v.writer == seen[i-1].writer {
			continue // not a write of a handler
		}
		if _, id, _ := strings.Cut(v.writer, "/"); v.writer != "" && id != v.assigned {
			t.Errorf("%s's write landed on version %s, assigned to %q: a term's write landed after the object left it", v.writer, v.rv, v.assigned)
		}
		if sawB && v.writer == "a/"+stalled {
			t.Errorf("a's patch, sent while its term %s held the object, landed after b's write (version %s)", stalled, v.rv)
		}
		sawB = sawB || strings.HasPrefix(v.writer, "b/")
	}
	a.mu.Lock()
	t.Logf("a's patches: %v; the object's versions: %v", a.ended, seen)
	a.mu.Unlock()
}

// settledOn waits until every ConfigMap of ns is on the member Pick
// chooses among a and b, with no drain pending, and returns one of a's.
func settledOn(t *testing.T, ns string, a, b *writingMember) string {
	t.Helper()
	kube := controlplanetest.Clientset(cp().Config())
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
	return target
}

// objectVersion is one version of an object as a watch saw it: its
// resourceVersion, its writer (data.writer) and the member it is assigned
// to.
type objectVersion struct {
	rv, writer, assigned string
}

func (v objectVersion) String() string { return v.rv + ":" + v.writer + "@" + v.assigned }

// versionWatch records every version of one ConfigMap a watch sees.
type versionWatch struct {
	mu    sync.Mutex
	seen  []objectVersion
	ended bool // a version with data.end was seen
}

// watchVersions starts recording the versions of ConfigMap ns/name.
func watchVersions(t *testing.T, ns, name string) *versionWatch {
	t.Helper()
	w, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	v := &versionWatch{}
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Modified {
				v.mu.Lock()
				v.seen = append(v.seen, objectVersion{rv: cm.ResourceVersion, writer: cm.Data["writer"], assigned: cm.Labels[shard.AssignmentLabel(ringName)]})
				v.ended = v.ended || cm.Data["end"] != ""
				v.mu.Unlock()
			}
		}
	}()
	return v
}

// untilEnd waits for the version with data.end, and returns the versions
// seen up to it.
func (v *versionWatch) untilEnd(t *testing.T) []objectVersion {
	t.Helper()
	eventually(t, "the watch seeing the last write", func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.ended
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.seen)
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
