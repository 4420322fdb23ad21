package controller_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestBackWithinSecondsAfterAPIServerRestarts is the scenario: 200
// objects, at least 5,000 updates from 4 writers that keep writing (each
// write retried until it succeeds while the API server is down) until the
// API server has been restarted five times under them. Every object's final state
// must reach the handler within 10 s of the last write: informers must be
// listing and watching again within seconds of the server coming back,
// however often it went away, instead of waiting behind client-go's growing
// reflector backoff. The full 5,000 updates take about 40 s on two cores
// (under 50 s with -race), restarts included.
func TestBackWithinSecondsAfterAPIServerRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the API server five times under 5,000 writes")
	}
	own := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, own.Config())
	const objects, updates, writers, restarts = 200, 5000, 4, 5
	name := func(i int) string { return fmt.Sprintf("obj-%d", i) }
	for i := range objects {
		createCM(t, own.Config(), ns, name(i), map[string]string{"v": "0"})
	}
	f := newFactory(t, own.Config(), ns, setup{})
	c := configMapController(t, f)
	seen := &valueTimes{at: map[string]map[string]time.Time{}}
	c.RegisterHandler(t.Context(), "record", seen)
	start(t, f, 2)

	// Writer w owns the objects i ≡ w (mod writers) and writes them in
	// turn, so each object's values increase and its last one is known.
	cms := kube(own.Config()).CoreV1().ConfigMaps(ns)
	var written, failures atomic.Int64
	type final struct {
		value string
		at    time.Time
	}
	finals := make([]map[string]final, writers)
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	writeStart := time.Now()
	// The restarter closes restartsOver when it is done (or failed), and
	// the writers keep writing until then, however fast this machine
	// writes: every restart starts and ends with writes in flight.
	restartsOver := make(chan struct{})
	writingOn := func(n int) bool {
		if n < updates/writers {
			return true
		}
		select {
		case <-restartsOver:
			return false
		default:
			return true
		}
	}
	for w := range writers {
		finals[w] = map[string]final{}
		wg.Go(func() {
			for n := 0; writingOn(n); n++ {
				i := w + writers*(n%(objects/writers))
				value := fmt.Sprint(n + 1)
				if err := writeCounting(t.Context(), cms, name(i), value, &failures); err != nil {
					errs <- err
					return
				}
				finals[w][fmt.Sprintf("%s/%s", ns, name(i))] = final{value, time.Now()}
				written.Add(1)
			}
		})
	}
	// The restarts are spread over the first 5,000 writes by progress
	// (restart k once k/(restarts+1) of them are done). Each restart must
	// have failed some writes, or the writers were not writing through it.
	var restarted atomic.Int64
	writersDone := make(chan struct{})
	var restarter sync.WaitGroup
	restarter.Go(func() {
		defer close(restartsOver)
		for k := int64(1); k <= restarts; k++ {
			for written.Load() < k*updates/(restarts+1) {
				select {
				case <-writersDone: // every writer failed
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			before := failures.Load()
			if err := own.RestartAPIServer(t.Context()); err != nil {
				errs <- err
				return
			}
			if failures.Load() == before {
				errs <- fmt.Errorf("restart %d failed no write: writes were not in flight", k)
			}
			restarted.Store(k)
		}
	})
	wg.Wait()
	lastWrite := time.Now()
	close(writersDone)
	restarter.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := restarted.Load(); got != restarts {
		t.Fatalf("%d of %d restarts happened while the writers wrote", got, restarts)
	}
	t.Logf("%d writes, %d write attempts failed during %d restarts, writing took %s",
		written.Load(), failures.Load(), restarts, lastWrite.Sub(writeStart).Round(time.Millisecond))

	want := map[string]final{}
	for _, m := range finals {
		maps.Copy(want, m)
	}
	if len(want) != objects {
		t.Fatalf("%d objects written, want %d", len(want), objects)
	}
	// lag is how long after its last write each object's final value
	// reached the handler; stragglers are those it has not reached.
	lag := func() (worst time.Duration, stragglers []string) {
		for key, fin := range want {
			at, ok := seen.first(key, fin.value)
			if !ok {
				stragglers = append(stragglers, key)
				continue
			}
			worst = max(worst, at.Sub(fin.at))
		}
		slices.Sort(stragglers)
		return worst, stragglers
	}
	wait := func(until time.Time) {
		for time.Now().Before(until) {
			if _, s := lag(); len(s) == 0 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(lastWrite.Add(10 * time.Second))
	worst, stragglers := lag()
	if len(stragglers) > 0 {
		// How far behind: wait a minute more to say when they arrived.
		wait(lastWrite.Add(70 * time.Second))
		later, left := lag()
		t.Fatalf("%d of %d objects' final state did not reach the handler within 10 s of the last write, e.g. %s; "+
			"70 s after it, %d still had not (worst lag of those seen: %s)",
			len(stragglers), objects, stragglers[0], len(left), later.Round(time.Millisecond))
	}
	t.Logf("every object's final state reached the handler; worst lag after its last write %s, all within %s of the last write",
		worst.Round(time.Millisecond), time.Since(lastWrite).Round(time.Millisecond))
}

// TestListWatchFailuresAreCountedLoggedAndNamed stops the API server under
// a running informer: its failures are counted in a metric, logged by kind
// at most once per interval, and once it has failed for longer than
// UnhealthyAfter the kind is named as unable to list or watch. When the
// server is back, the kind reports healthy again.
func TestListWatchFailuresAreCountedLoggedAndNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("stops the API server")
	}
	own := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, own.Config())
	log, hook := logtest.NewNullLogger()
	reg := prometheus.NewRegistry()
	f := newFactory(t, own.Config(), ns, setup{
		cacheOpts: cache.SharedCacheFactoryOptions{UnhealthyAfter: time.Second},
		opts:      controller.SharedControllerFactoryOptions{Logger: log, Registerer: reg},
	})
	if _, err := f.ForKind(configMapGVK); err != nil {
		t.Fatal(err)
	}
	start(t, f, 1)
	metric := func(name string) float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range families {
			if mf.GetName() == name {
				for _, m := range mf.GetMetric() {
					if m.GetLabel()[0].GetValue() == "v1/ConfigMap" {
						return metricValue(m)
					}
				}
			}
		}
		return -1
	}
	if got := metric("lariat_cache_list_watch_failing_seconds"); got != 0 {
		t.Fatalf("failing seconds before the cut = %v", got)
	}

	if err := own.StopAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	named := func() bool {
		for _, e := range hook.AllEntries() {
			if e.Level == logrus.ErrorLevel && e.Data["gvk"] == "v1/ConfigMap" && strings.Contains(e.Message, "cannot list or watch") {
				return true
			}
		}
		return false
	}
	controlplanetest.Eventually(t, 30*time.Second, "the kind named as unable to list or watch", named)
	time.Sleep(2 * time.Second) // more failures, which must not each get a line
	errs := metric("lariat_cache_list_watch_errors_total")
	warnings := 0
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && e.Data["gvk"] == "v1/ConfigMap" {
			warnings++
		}
	}
	if errs < 3 || warnings == 0 || float64(warnings) >= errs {
		t.Errorf("%v failures counted, %d warning lines; want several failures, each interval logged once", errs, warnings)
	}
	if got := metric("lariat_cache_list_watch_failing_seconds"); got < 1 {
		t.Errorf("failing seconds during the cut = %v", got)
	}

	if err := own.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "healthy again", func() bool { return metric("lariat_cache_list_watch_failing_seconds") == 0 })
}

// valueTimes records when the handler first saw each value of each key.
type valueTimes struct {
	mu sync.Mutex
	at map[string]map[string]time.Time
}

func (v *valueTimes) OnChange(key string, obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	value := obj.(*corev1.ConfigMap).Data["v"]
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.at[key] == nil {
		v.at[key] = map[string]time.Time{}
	}
	if _, ok := v.at[key][value]; !ok {
		v.at[key][value] = now
	}
	return nil, nil
}

func (v *valueTimes) first(key, value string) (time.Time, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.at[key][value]
	return at, ok
}

// writeCounting sets name's data to value, retrying every 50 ms (for up to
// a minute) while the API server is away, and counts the failed attempts.
func writeCounting(ctx context.Context, cms configMapWriter, name, value string, failures *atomic.Int64) error {
	deadline := time.Now().Add(time.Minute)
	for {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			cm.Data = map[string]string{"v": value}
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err == nil {
			return nil
		}
		failures.Add(1)
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("write %s=%s: %w", name, value, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
