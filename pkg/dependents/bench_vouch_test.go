package dependents_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// benchLatched is how many owners are latched (available) when the
// registration restarts, each required by another owner's ConfigMap.
const benchLatched = 1000

// requestCounter counts the requests made through a config, and among
// them the reads of single ConfigMaps and the plain lists of ConfigMaps
// (no watch).
type requestCounter struct {
	all, gets, lists atomic.Int64
	next             http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "" {
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case strings.HasSuffix(path, "/configmaps"):
			c.lists.Add(1)
		case strings.Contains(path, "/configmaps/"):
			c.gets.Add(1)
		}
	}
	return c.next.RoundTrip(r)
}

// BenchmarkFirstResyncWithLatchedOwners measures a restart of a
// registration whose benchLatched base owners were available (latched),
// each required (RequiresOwnerAvailable) by another owner's ConfigMap:
// the time from Register to the first committed resync, and the API
// requests it made (all, single ConfigMap reads, ConfigMap lists), of
// which the first resync's confirmation of each latch (vouch.go) is part.
func BenchmarkFirstResyncWithLatchedOwners(b *testing.B) {
	ns := controlplanetest.Namespace(b, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})
		if base, ok := strings.CutPrefix(app.Name, "req-"); ok {
			cm.RequiresOwnerAvailable(app.Namespace, "base-"+base)
		}
		return []*dependents.Object{cm}, nil
	}
	ctx, cancel := context.WithCancel(b.Context())
	d, webapps, _ := startLatchBench(b, ctx, ns, handler)
	for i := range benchLatched {
		for _, prefix := range []string{"base-", "req-"} {
			app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s%04d", prefix, i)},
				Spec: demov1.WebAppSpec{Image: "app:1"}}
			if _, err := webapps.Create(ctx, app); err != nil {
				b.Fatal(err)
			}
		}
	}
	kube := controlplanetest.Clientset(cp.Config())
	controlplanetest.Eventually(b, 10*time.Minute, "every requirer's ConfigMap", func() bool {
		cms, err := kube.CoreV1().ConfigMaps(ns).List(b.Context(), metav1.ListOptions{LabelSelector: "lariat.dev/managed-by=bench-latch"})
		return err == nil && len(cms.Items) == 2*benchLatched
	})
	cancel()
	if err := d.Wait(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(b.Context())
		start := time.Now()
		d, _, cnt := startLatchBench(b, ctx, ns, handler)
		for !committedResync(d) {
			time.Sleep(5 * time.Millisecond)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/first-resync")
		b.ReportMetric(float64(cnt.all.Load()), "requests")
		b.ReportMetric(float64(cnt.gets.Load()), "configmap-gets")
		b.ReportMetric(float64(cnt.lists.Load()), "configmap-lists")
		b.StopTimer()
		cancel()
		if err := d.Wait(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// startLatchBench registers handler on a new factory watching ns only,
// with its requests counted, and starts it.
func startLatchBench(b *testing.B, ctx context.Context, ns string,
	handler dependents.Handler[*demov1.WebApp]) (*dependents.Dependents, democtl.WebAppController, *requestCounter) {
	cfg := rest.CopyConfig(cp.Config())
	cfg.QPS, cfg.Burst = -1, 0
	cnt := &requestCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { cnt.next = rt; return cnt })
	f, err := generic.NewFactoryFromConfig(cfg, nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}}})
	if err != nil {
		b.Fatal(err)
	}
	df, err := demo.NewFactory(f)
	if err != nil {
		b.Fatal(err)
	}
	webapps, err := df.Demo().V1().WebApp()
	if err != nil {
		b.Fatal(err)
	}
	d, err := democtl.RegisterWebAppDependents(ctx, f, webapps, "bench-latch", handler, dependents.Options{
		FieldManager: "bench-latch", Namespace: ns, Logger: controlplanetest.QuietLogger(),
		Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Start(ctx, 4); err != nil {
		b.Fatal(err)
	}
	return d, webapps, cnt
}
