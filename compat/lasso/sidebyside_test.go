package lasso_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	lassocache "github.com/rancher/lasso/pkg/cache"
	lassocontroller "github.com/rancher/lasso/pkg/controller"
	corectl "github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	corev1ctl "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/schemes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/generated/controllers/widgets.lasso.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/crd"
)

// The side-by-side tests (issue 26, part 2) run one scenario twice, in
// parallel and each in a namespace of its own: with wrangler v3's generated
// factories over lasso v0.2.10's own SharedControllerFactory, and over
// compat/lasso's adapter on Lariat's core. Each run records what its
// handlers observe; the two recordings must be equal, unless a scenario
// asserts a documented difference (docs/comparison.md) explicitly.

// impl names the core a side runs on.
type impl string

const (
	onLasso  impl = "lasso"
	onLariat impl = "lariat"
)

// sideOptions configure both sides of a scenario alike.
type sideOptions struct {
	// resync is the informers' resync period (zero: none).
	resync time.Duration
	// syncOnlyChanged is SyncOnlyChangedObjects on both factories.
	syncOnlyChanged bool
	// widgets installs the Widget CRD and builds the widgets factory.
	widgets bool
}

// side is one run of a scenario: a wrangler operator on one core.
type side struct {
	impl    impl
	ns      string
	core    *corectl.Factory
	widgets *widgets.Factory // nil unless sideOptions.widgets
	kube    *kubernetes.Clientset
	net     *netGate
	rec     *recording
	// handlers is the context handlers are registered with: it does not
	// end with the test. lasso v0.2.10 removes a handler whose context
	// ended by shifting the slice a running pass iterates (a data race
	// the race detector reports when a test ends during a pass); the
	// operator's factory stops with the test's context on both cores.
	handlers context.Context
	// metrics is Lariat's controller metrics registry (nil on lasso, which
	// has only the global one).
	metrics *prometheus.Registry
}

func newSide(t *testing.T, which impl, opts sideOptions) *side {
	t.Helper()
	net, cfg := newNetGate(cp.Config())
	ns := controlplanetest.Namespace(t, cfg)
	var scf lassocontroller.SharedControllerFactory
	var metrics *prometheus.Registry
	switch which {
	case onLasso:
		f, err := lassocontroller.NewSharedControllerFactoryFromConfigWithOptions(cfg, schemes.All, &lassocontroller.SharedControllerFactoryOptions{
			CacheOptions:           &lassocache.SharedCacheFactoryOptions{DefaultNamespace: ns, DefaultResync: opts.resync},
			SyncOnlyChangedObjects: opts.syncOnlyChanged,
		})
		if err != nil {
			t.Fatal(err)
		}
		scf = f
	case onLariat:
		clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: schemes.All})
		if err != nil {
			t.Fatal(err)
		}
		caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
			Default: cache.Options{Namespace: ns, Resync: opts.resync},
		})
		metrics = prometheus.NewRegistry()
		lf, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{
			SyncOnlyChangedObjects: opts.syncOnlyChanged,
			Logger:                 controlplanetest.QuietLogger(),
			Registerer:             metrics,
		})
		if err != nil {
			t.Fatal(err)
		}
		scf = lasso.NewSharedControllerFactory(lf)
	}
	s := &side{impl: which, ns: ns, net: net, kube: controlplanetest.Clientset(cp.Config()), rec: newRecording(ns), metrics: metrics,
		handlers: context.WithoutCancel(t.Context())}
	var err error
	if s.core, err = corectl.NewFactoryFromConfigWithOptions(cfg, &corectl.FactoryOptions{SharedControllerFactory: scf}); err != nil {
		t.Fatal(err)
	}
	if opts.widgets {
		if err := crd.Install(t.Context(), cp.Config(), crd.Type{GVK: widgetGVK, Status: true}.CRD()); err != nil {
			t.Fatal(err)
		}
		if s.widgets, err = widgets.NewFactoryFromConfigWithOptions(cfg, &widgets.FactoryOptions{SharedControllerFactory: scf}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// start starts the operator as a wrangler program does. Both generated
// factories share the one SharedControllerFactory, so one Start runs every
// kind's controller.
func (s *side) start(t *testing.T) {
	t.Helper()
	if err := s.core.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

func (s *side) cms() corev1ctl.ConfigMapController { return s.core.Core().V1().ConfigMap() }

func (s *side) key(name string) string { return s.ns + "/" + name }

// createCM creates a ConfigMap with data v=value.
func (s *side) createCM(t *testing.T, name, value string) *corev1.ConfigMap {
	t.Helper()
	cm, err := s.kube.CoreV1().ConfigMaps(s.ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// setCM sets data v=value on a ConfigMap, retrying conflicts with the
// handlers' writes.
func (s *side) setCM(t *testing.T, name, value string) {
	t.Helper()
	eventually(t, "update "+name, func() bool {
		cm, err := s.kube.CoreV1().ConfigMaps(s.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		cm.Data = map[string]string{"v": value}
		_, err = s.kube.CoreV1().ConfigMaps(s.ns).Update(t.Context(), cm, metav1.UpdateOptions{})
		return err == nil
	})
}

func (s *side) deleteCM(t *testing.T, name string) {
	t.Helper()
	if err := s.kube.CoreV1().ConfigMaps(s.ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// goneCM reports whether the ConfigMap is gone from the server.
func (s *side) goneCM(t *testing.T, name string) func() bool {
	return func() bool {
		_, err := s.kube.CoreV1().ConfigMaps(s.ns).Get(t.Context(), name, metav1.GetOptions{})
		return err != nil
	}
}

// describeCM is a handler's observation of a ConfigMap: nil, or its name,
// data, finalizers, whether it is being deleted and the annotations a
// scenario's handlers set (the "seen-" ones), never its resourceVersion.
func describeCM(cm *corev1.ConfigMap) string {
	if cm == nil {
		return "nil"
	}
	var ann []string
	for k, v := range cm.Annotations {
		if strings.HasPrefix(k, "seen-") {
			ann = append(ann, k+"="+v)
		}
	}
	sort.Strings(ann)
	return fmt.Sprintf("name=%q v=%q fin=%v deleting=%t ann=%v",
		cm.Name, cm.Data["v"], cm.Finalizers, cm.DeletionTimestamp != nil, ann)
}

// recording is what a side's handlers observed: per observer (a handler,
// or "test" for facts the scenario checks), the sequence of observations.
// The side's namespace is recorded as NS, in keys and observations.
type recording struct {
	ns string
	mu sync.Mutex
	by map[string][]string
}

func newRecording(ns string) *recording { return &recording{ns: ns, by: map[string][]string{}} }

// add records what observer saw for key. kube-root-ca.crt, which the API
// server may put in every namespace, is no part of any scenario.
func (r *recording) add(observer, key, what string) {
	if strings.HasSuffix(key, "/kube-root-ca.crt") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.by[observer] = append(r.by[observer], strings.ReplaceAll(key+": "+what, r.ns, "NS"))
}

// get returns observer's observations so far.
func (r *recording) get(observer string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.by[observer])
}

// has reports whether observer has recorded the line key+": "+what.
func (r *recording) has(observer, key, what string) bool {
	return slices.Contains(r.get(observer), strings.ReplaceAll(key+": "+what, r.ns, "NS"))
}

// count returns how many observations observer has recorded.
func (r *recording) count(observer string) int { return len(r.get(observer)) }

// collapsed returns the observations with consecutive repeats dropped, for
// scenarios where the number of passes over one state depends on how
// watch events and the queue interleave.
func (r *recording) collapsed() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for who, seen := range r.by {
		out[who] = slices.Compact(slices.Clone(seen))
	}
	return out
}

func (r *recording) all() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for who, seen := range r.by {
		out[who] = slices.Clone(seen)
	}
	return out
}

// sideBySide runs scenario on lasso and on Lariat, in parallel, and returns
// the two recordings.
func sideBySide(t *testing.T, opts sideOptions, scenario func(t *testing.T, s *side)) (lassoRec, lariatRec *recording) {
	t.Helper()
	recs := map[impl]*recording{}
	var mu sync.Mutex
	t.Run("sides", func(t *testing.T) {
		for _, which := range []impl{onLasso, onLariat} {
			t.Run(string(which), func(t *testing.T) {
				t.Parallel()
				s := newSide(t, which, opts)
				mu.Lock()
				recs[which] = s.rec
				mu.Unlock()
				scenario(t, s)
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	for _, which := range []impl{onLasso, onLariat} {
		t.Logf("observed on %s: %q", which, recs[which].all())
	}
	return recs[onLasso], recs[onLariat]
}

// assertSame fails with a per-observer diff unless both sides observed the
// same. Observations are compared per observer and key: the order of
// different keys depends on which worker took which key first.
func assertSame(t *testing.T, lassoSeen, lariatSeen map[string][]string) {
	t.Helper()
	if diff := diffRecordings("lasso", byKey(lassoSeen), "lariat", byKey(lariatSeen)); diff != "" {
		t.Fatalf("handlers observed different things on lasso and on compat/lasso:\n%s", diff)
	}
}

// byKey splits each observer's observations by key, as "observer key".
func byKey(seen map[string][]string) map[string][]string {
	out := map[string][]string{}
	for who, lines := range seen {
		for _, line := range lines {
			key, _, _ := strings.Cut(line, ": ")
			out[who+" "+key] = append(out[who+" "+key], line)
		}
	}
	return out
}

// assertObserved fails with a per-observer diff unless one side observed
// what a scenario expects of it, for the differences the tests assert.
func assertObserved(t *testing.T, which impl, seen, want map[string][]string) {
	t.Helper()
	if diff := diffRecordings(string(which), seen, "want", want); diff != "" {
		t.Fatalf("handlers on %s observed other than expected:\n%s", which, diff)
	}
}

// diffRecordings lists, for each observer whose observations differ, both
// sequences with the first differing line marked.
func diffRecordings(aName string, aSeen map[string][]string, bName string, bSeen map[string][]string) string {
	var observers []string
	for who := range aSeen {
		observers = append(observers, who)
	}
	for who := range bSeen {
		if _, ok := aSeen[who]; !ok {
			observers = append(observers, who)
		}
	}
	sort.Strings(observers)
	var b strings.Builder
	for _, who := range observers {
		a, l := aSeen[who], bSeen[who]
		if slices.Equal(a, l) {
			continue
		}
		first := 0
		for first < len(a) && first < len(l) && a[first] == l[first] {
			first++
		}
		fmt.Fprintf(&b, "observer %q (first difference at #%d):\n", who, first)
		writeSeq(&b, aName, a, first)
		writeSeq(&b, bName, l, first)
	}
	return b.String()
}

func writeSeq(b *strings.Builder, name string, seq []string, first int) {
	fmt.Fprintf(b, "  on %s (%d):\n", name, len(seq))
	for i, line := range seq {
		mark := "   "
		if i == first {
			mark = ">> "
		}
		fmt.Fprintf(b, "    %s#%d %s\n", mark, i, line)
	}
}

// waitCount waits until observer has recorded at least n observations.
func (s *side) waitCount(t *testing.T, observer string, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s: %s records %d observations", s.impl, observer, n), func() bool {
		return s.rec.count(observer) >= n
	})
}

// waitSeen waits until observer has recorded what for key.
func (s *side) waitSeen(t *testing.T, observer, key, what string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s: %s sees %s: %s", s.impl, observer, key, what), func() bool {
		return s.rec.has(observer, key, what)
	})
}
