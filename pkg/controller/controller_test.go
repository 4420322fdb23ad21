package controller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{testkinds.CRDDir()}}, &cp)
}

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

type setup struct {
	cacheOpts cache.SharedCacheFactoryOptions
	opts      controller.SharedControllerFactoryOptions
}

// newFactory returns a controller factory whose caches only see namespace ns,
// so tests sharing the control plane do not see each other's objects.
func newFactory(t *testing.T, cfg *rest.Config, ns string, s setup) *controller.SharedControllerFactory {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.cacheOpts.Default.Namespace == "" {
		s.cacheOpts.Default.Namespace = ns
	}
	if s.cacheOpts.SyncTimeout == 0 {
		s.cacheOpts.SyncTimeout = time.Minute
	}
	if s.opts.Logger == nil {
		s.opts.Logger = controlplanetest.QuietLogger()
	}
	s.cacheOpts.Logger = s.opts.Logger
	f, err := controller.NewSharedControllerFactory(cache.NewSharedCacheFactory(clients, &s.cacheOpts), &s.opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// recorder is a handler that remembers what it saw.
type recorder struct {
	mu    sync.Mutex
	keys  []string
	state map[string]*corev1.ConfigMap // last object seen per key; nil once deleted
}

func newRecorder() *recorder { return &recorder{state: map[string]*corev1.ConfigMap{}} }

func (r *recorder) OnChange(key string, obj runtime.Object) (runtime.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, key)
	if obj == nil {
		r.state[key] = nil
	} else {
		r.state[key] = obj.(*corev1.ConfigMap).DeepCopy()
	}
	return nil, nil
}

func (r *recorder) seen(key string) (cm *corev1.ConfigMap, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm, ok = r.state[key]
	return cm, ok
}

func (r *recorder) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys)
}

// kube returns a clientset without client-side throttling (client-go's
// default of 5 requests per second would make the writers in these tests
// slower than the controllers they test).
func kube(cfg *rest.Config) *kubernetes.Clientset { return controlplanetest.Clientset(cfg) }

func createCM(t *testing.T, cfg *rest.Config, ns, name string, data map[string]string) {
	t.Helper()
	_, err := kube(cfg).CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, f *controller.SharedControllerFactory, workers int) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Start(ctx, workers); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestChangesReachHandlers(t *testing.T) { changesReachHandlers(t, setup{}) }

// TestCompactCacheChangesReachHandlers: with objects held encoded
// (cache.Options.Compact), handlers get them decoded, whole.
func TestCompactCacheChangesReachHandlers(t *testing.T) {
	changesReachHandlers(t, setup{cacheOpts: cache.SharedCacheFactoryOptions{Default: cache.Options{Compact: true}}})
}

func changesReachHandlers(t *testing.T, s setup) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, s)
	_, rec := recordConfigMaps(t, f)
	start(t, f, 2)

	key := ns + "/cm"
	createCM(t, cp.Config(), ns, "cm", map[string]string{"v": "1"})
	controlplanetest.Eventually(t, 30*time.Second, "create", func() bool { cm, _ := rec.seen(key); return cm != nil && cm.Data["v"] == "1" })

	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(t.Context(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "update", func() bool { cm, _ := rec.seen(key); return cm != nil && cm.Data["v"] == "2" })

	if err := cms.Delete(t.Context(), "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "delete as nil", func() bool { cm, ok := rec.seen(key); return ok && cm == nil })
}

func TestFailingHandlerBacksOffUntilFixed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const base = 20 * time.Millisecond
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Backoff: controller.Backoff{Base: base, Max: time.Second},
	}})
	c := configMapController(t, f)
	var mu sync.Mutex
	var calls []time.Time
	const failures = 4
	c.RegisterHandler(t.Context(), "flaky", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, time.Now())
		if len(calls) <= failures {
			return nil, fmt.Errorf("not yet (%d)", len(calls))
		}
		return nil, nil
	}))
	start(t, f, 1)
	createCM(t, cp.Config(), ns, "flaky", nil)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(calls) }
	controlplanetest.Eventually(t, 30*time.Second, "success after retries", func() bool { return count() == failures+1 })

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(calls); i++ {
		gap := calls[i].Sub(calls[i-1])
		// Retry i waits base*2^(i-1), less at most 10% jitter.
		minGap := time.Duration(float64(base<<(i-1)) * 0.9)
		if gap < minGap {
			t.Errorf("retry %d came after %s, want at least %s (exponential backoff)", i, gap, minGap)
		}
	}
}

func TestKeysEnqueuedBeforeStartAreProcessed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	c, rec := recordConfigMaps(t, f)
	c.Enqueue(ns, "does-not-exist")
	c.EnqueueKey(ns + "/also-missing")
	c.EnqueueAfter(ns, "delayed", 100*time.Millisecond)
	started := time.Now()
	start(t, f, 1)
	controlplanetest.Eventually(t, 30*time.Second, "keys enqueued before Start", func() bool {
		a, okA := rec.seen(ns + "/does-not-exist")
		b, okB := rec.seen(ns + "/also-missing")
		c, okC := rec.seen(ns + "/delayed")
		return okA && okB && okC && a == nil && b == nil && c == nil
	})
	if elapsed := time.Since(started); elapsed < 100*time.Millisecond {
		t.Errorf("EnqueueAfter's key was handled after %s, before its delay", elapsed)
	}
}

func TestLateHandlerGetsEveryCachedKey(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		createCM(t, cp.Config(), ns, fmt.Sprintf("cm-%d", i), nil)
	}
	f := newFactory(t, cp.Config(), ns, setup{})
	c := configMapController(t, f)
	first := newRecorder()
	c.RegisterHandler(t.Context(), "first", first)
	start(t, f, 1)
	controlplanetest.Eventually(t, 30*time.Second, "first handler", func() bool { return len(first.order()) >= 3 })

	late := newRecorder()
	c.RegisterHandler(t.Context(), "late", late)
	controlplanetest.Eventually(t, 30*time.Second, "late handler sees cached keys", func() bool {
		for i := range 3 {
			if cm, ok := late.seen(fmt.Sprintf("%s/cm-%d", ns, i)); !ok || cm == nil {
				return false
			}
		}
		return true
	})
}

func TestHandlerUnregisteredWhenContextEnds(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	c := configMapController(t, f)
	keep, gone := newRecorder(), newRecorder()
	c.RegisterHandler(t.Context(), "keep", keep)
	handlerCtx, cancel := context.WithCancel(t.Context())
	c.RegisterHandler(handlerCtx, "gone", gone)
	start(t, f, 1)
	createCM(t, cp.Config(), ns, "one", nil)
	controlplanetest.Eventually(t, 30*time.Second, "both handlers", func() bool {
		_, a := keep.seen(ns + "/one")
		_, b := gone.seen(ns + "/one")
		return a && b
	})
	cancel()
	// Unregistration happens asynchronously; once a later key has reached
	// "keep", any key after that must skip "gone".
	controlplanetest.Eventually(t, 30*time.Second, "unregistration", func() bool {
		name := fmt.Sprintf("probe-%d", time.Now().UnixNano())
		createCM(t, cp.Config(), ns, name, nil)
		controlplanetest.Eventually(t, 30*time.Second, "probe", func() bool { _, ok := keep.seen(ns + "/" + name); return ok })
		_, ok := gone.seen(ns + "/" + name)
		return !ok
	})
	before := len(gone.order())
	createCM(t, cp.Config(), ns, "after", nil)
	controlplanetest.Eventually(t, 30*time.Second, "keep sees later keys", func() bool { _, ok := keep.seen(ns + "/after"); return ok })
	if after := len(gone.order()); after != before {
		t.Fatalf("a handler whose context ended was called %d more times", after-before)
	}
}

func TestWatchEventsOvertakeInitialList(t *testing.T) { watchEventsOvertakeInitialList(t, setup{}) }

// TestCompactCacheWatchEventsOvertakeInitialList: a compact cache hands
// the controller's event handler its stored form (keys only), which keeps
// the initial list's items behind real changes.
func TestCompactCacheWatchEventsOvertakeInitialList(t *testing.T) {
	watchEventsOvertakeInitialList(t, setup{cacheOpts: cache.SharedCacheFactoryOptions{Default: cache.Options{Compact: true}}})
}

func watchEventsOvertakeInitialList(t *testing.T, s setup) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const existing = 100
	for i := range existing {
		createCM(t, cp.Config(), ns, fmt.Sprintf("old-%03d", i), nil)
	}
	f := newFactory(t, cp.Config(), ns, s)
	c := configMapController(t, f)
	rec := newRecorder()
	c.RegisterHandler(t.Context(), "slow", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		time.Sleep(10 * time.Millisecond) // a backlog of ~1 s
		return rec.OnChange(key, obj)
	}))
	start(t, f, 1)
	createCM(t, cp.Config(), ns, "urgent", nil)
	controlplanetest.Eventually(t, time.Minute, "all keys", func() bool { return len(rec.order()) >= existing+1 })

	pos := slices.Index(rec.order(), ns+"/urgent")
	// In arrival order the new object would come last (position 100); as
	// a watch event it waits only for the keys handled before it arrived.
	if pos > existing/2 {
		t.Fatalf("the watch event was handled at position %d of %d: it waited behind the initial list", pos, existing+1)
	}
	t.Logf("watch event handled at position %d of %d", pos, existing+1)
}

func TestMissingCRDDoesNotBlockAndLateCRDIsServed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{cacheOpts: cache.SharedCacheFactoryOptions{SyncTimeout: 2 * time.Second}})
	cms, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	lateDir, lateGVK, lateGVR, err := testkinds.NewLateKind(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gadgets, err := f.ForKind(lateGVK)
	if err != nil {
		t.Fatal(err)
	}
	cmRec := newRecorder()
	cms.RegisterHandler(t.Context(), "cms", cmRec)
	var gadgetMu sync.Mutex
	gadgetKeys := map[string]bool{}
	gadgets.RegisterHandler(t.Context(), "gadgets", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		gadgetMu.Lock()
		defer gadgetMu.Unlock()
		gadgetKeys[key] = obj != nil
		return nil, nil
	}))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = f.Start(ctx, 1)
	var syncErr *cache.SyncError
	if !errors.As(err, &syncErr) || len(syncErr.Unsynced) != 1 || !strings.Contains(err.Error(), lateGVK.String()) {
		t.Fatalf("Start: want a SyncError naming only %s, got %v", lateGVK, err)
	}
	createCM(t, cp.Config(), ns, "works", nil)
	controlplanetest.Eventually(t, 30*time.Second, "configmap handled while the late kind is missing", func() bool {
		cm, _ := cmRec.seen(ns + "/works")
		return cm != nil
	})

	if err := controlplane.InstallCRDs(t.Context(), cp.Config(), lateDir); err != nil {
		t.Fatal(err)
	}
	_, err = dynamic.NewForConfigOrDie(cp.Config()).Resource(lateGVR).Namespace(ns).
		Create(t.Context(), testkinds.Object(lateGVK, ns, "g1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "object handled after its CRD was installed", func() bool {
		gadgetMu.Lock()
		defer gadgetMu.Unlock()
		return gadgetKeys[ns+"/g1"]
	})
}

func TestConflictsRetryWithoutErrorLines(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{Logger: log}})
	c := configMapController(t, f)
	var mu sync.Mutex
	calls := 0
	c.RegisterHandler(t.Context(), "conflicting", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("the object has been modified"))
		}
		return nil, nil
	}))
	start(t, f, 1)
	createCM(t, cp.Config(), ns, "c", nil)
	controlplanetest.Eventually(t, 30*time.Second, "retry after conflict", func() bool { mu.Lock(); defer mu.Unlock(); return calls >= 2 })
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.ErrorLevel {
			t.Errorf("conflict logged as %s: %s", e.Level, e.Message)
		}
	}
}

func TestErrorsAndPanicsAreLoggedWithKindAndKey(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Logger:  log,
		Backoff: controller.Backoff{Base: time.Hour}, // one failure is enough
	}})
	c := configMapController(t, f)
	c.RegisterHandler(t.Context(), "panics", controller.SharedHandlerFunc(func(string, runtime.Object) (runtime.Object, error) {
		panic("handler bug")
	}))
	start(t, f, 1)
	createCM(t, cp.Config(), ns, "p", nil)
	controlplanetest.Eventually(t, 30*time.Second, "error line", func() bool {
		for _, e := range hook.AllEntries() {
			if e.Level == logrus.ErrorLevel && e.Data["key"] == ns+"/p" && e.Data["gvk"] == "v1/ConfigMap" &&
				strings.Contains(e.Message, "handler panics panicked: handler bug") {
				return true
			}
		}
		return false
	})
}

func TestMetrics(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	reg := prometheus.NewRegistry()
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Registerer: reg,
		Backoff:    controller.Backoff{Base: time.Hour},
	}})
	c := configMapController(t, f)
	rec := newRecorder()
	c.RegisterHandler(t.Context(), "ok", rec)
	c.RegisterHandler(t.Context(), "fails", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		return nil, errors.New("always")
	}))
	for i := range 3 {
		createCM(t, cp.Config(), ns, fmt.Sprintf("m-%d", i), nil)
	}
	start(t, f, 1)
	controlplanetest.Eventually(t, 30*time.Second, "handled", func() bool { return len(rec.order()) >= 3 })

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string, labels map[string]string) float64 {
		for _, mf := range families {
			if mf.GetName() != name {
				continue
			}
		metrics:
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
						continue metrics
					}
				}
				return metricValue(m)
			}
		}
		return -1
	}
	gvk := map[string]string{"gvk": "v1/ConfigMap"}
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"lariat_queue_adds_total", map[string]string{"gvk": "v1/ConfigMap", "priority": "low"}, 3},
		{"lariat_queue_retries_total", gvk, 3},
		{"lariat_queue_wait_seconds", gvk, 3},
		{"lariat_handler_duration_seconds", map[string]string{"gvk": "v1/ConfigMap", "handler": "ok"}, 3},
		{"lariat_handler_errors_total", map[string]string{"gvk": "v1/ConfigMap", "handler": "fails"}, 3},
		{"lariat_cache_objects", gvk, 3},
	}
	for _, c := range checks {
		if got := value(c.name, c.labels); got < c.min {
			t.Errorf("%s%v = %v, want at least %v", c.name, c.labels, got, c.min)
		}
	}
	if got := value("lariat_handler_errors_total", map[string]string{"handler": "ok"}); got > 0 {
		t.Errorf("errors counted for the handler that succeeds: %v", got)
	}
}

// configMapController returns f's controller of ConfigMaps.
func configMapController(t *testing.T, f *controller.SharedControllerFactory) controller.SharedController {
	t.Helper()
	c, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordConfigMaps returns f's controller of ConfigMaps with a recorder
// registered on it as "record".
func recordConfigMaps(t *testing.T, f *controller.SharedControllerFactory) (controller.SharedController, *recorder) {
	t.Helper()
	c := configMapController(t, f)
	rec := newRecorder()
	c.RegisterHandler(t.Context(), "record", rec)
	return c, rec
}

// configMapMetric returns the value of the metric name for ConfigMaps (its
// gvk label v1/ConfigMap), 0 when it was never recorded.
func configMapMetric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "gvk" && lp.GetValue() == "v1/ConfigMap" {
					return metricValue(m)
				}
			}
		}
	}
	return 0
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func TestSyncOnlyChangedObjectsSkipsResyncs(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, cp.Config(), ns, "r", nil)
	count := func(onlyChanged bool) int {
		f := newFactory(t, cp.Config(), ns, setup{
			// client-go's shortest resync period is one second.
			cacheOpts: cache.SharedCacheFactoryOptions{Default: cache.Options{Resync: time.Second}},
			opts:      controller.SharedControllerFactoryOptions{SyncOnlyChangedObjects: onlyChanged},
		})
		c, err := f.ForKind(configMapGVK)
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		c.RegisterHandler(t.Context(), "count", rec)
		start(t, f, 1)
		time.Sleep(3500 * time.Millisecond) // room for at least two one-second resyncs under load
		return len(rec.order())
	}
	if n := count(true); n != 1 {
		t.Errorf("with SyncOnlyChangedObjects the unchanged object was handled %d times, want once", n)
	}
	if n := count(false); n < 2 {
		t.Errorf("without SyncOnlyChangedObjects periodic resyncs should re-handle the object, got %d calls", n)
	}
}
