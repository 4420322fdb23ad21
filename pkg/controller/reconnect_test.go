package controller_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestBackWithinSecondsAfterAPIServerRestarts restarts the API server five
// times while objects change. Every object's final state must reach the
// handler within 10 s of the last write: informers must be listing and
// watching again within seconds of the server coming back, however often
// it went away, instead of waiting behind client-go's growing reflector
// backoff.
func TestBackWithinSecondsAfterAPIServerRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the API server five times")
	}
	own := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, own.Config())
	const objects, rounds, restarts, writers = 100, 8, 5, 4
	for i := range objects {
		createCM(t, own.Config(), ns, fmt.Sprintf("obj-%d", i), map[string]string{"v": "0"})
	}
	f := newFactory(t, own.Config(), ns, setup{})
	c, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	c.RegisterHandler(t.Context(), "record", rec)
	start(t, f, 2)

	// Rounds of writes to every object, the API server restarted between
	// them, so the last round ends shortly after the last restart.
	cms := kube(own.Config()).CoreV1().ConfigMaps(ns)
	for round := 1; round <= rounds; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := w; i < objects; i += writers {
					if err := writeRetrying(t.Context(), cms, fmt.Sprintf("obj-%d", i), fmt.Sprint(round)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if round > rounds-restarts-1 && round < rounds {
			if err := own.RestartAPIServer(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	lastWrite := time.Now()

	want := fmt.Sprint(rounds)
	behind := func() []string {
		var keys []string
		for i := range objects {
			key := fmt.Sprintf("%s/obj-%d", ns, i)
			if cm, _ := rec.seen(key); cm == nil || cm.Data["v"] != want {
				keys = append(keys, key)
			}
		}
		return keys
	}
	for time.Since(lastWrite) < 10*time.Second && len(behind()) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if keys := behind(); len(keys) > 0 {
		t.Fatalf("%d of %d objects' final state did not reach the handler within 10 s of the last write, e.g. %s",
			len(keys), objects, keys[0])
	}
	t.Logf("all %d objects caught up %s after the last write", objects, time.Since(lastWrite).Round(time.Millisecond))
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
			if e.Level == logrus.ErrorLevel && e.Data["gvk"] == "/v1, Kind=ConfigMap" && strings.Contains(e.Message, "cannot list or watch") {
				return true
			}
		}
		return false
	}
	eventually(t, 30*time.Second, "the kind named as unable to list or watch", named)
	time.Sleep(2 * time.Second) // more failures, which must not each get a line
	errs := metric("lariat_cache_list_watch_errors_total")
	warnings := 0
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && e.Data["gvk"] == "/v1, Kind=ConfigMap" {
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
	eventually(t, 30*time.Second, "healthy again", func() bool { return metric("lariat_cache_list_watch_failing_seconds") == 0 })
}
