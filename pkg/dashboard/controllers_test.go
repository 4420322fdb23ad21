package dashboard_test

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestControllersViewFoldsTheMetricsPerKind: the controllers view reads
// the controller metrics of the registry, one line per kind, summing over
// handlers and priorities, with the waiting and handling times' means and
// percentiles (the handlers' histograms summed); the
// replicas view is the single replica unless told otherwise.
func TestControllersViewFoldsTheMetricsPerKind(t *testing.T) {
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lariat_queue_depth"}, []string{"gvk"})
	adds := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_queue_adds_total"}, []string{"gvk", "priority"})
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lariat_queue_wait_seconds"}, []string{"gvk"})
	handle := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lariat_handler_duration_seconds", Buckets: []float64{1, 2, 4, 8}}, []string{"gvk", "handler"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_handler_errors_total"}, []string{"gvk", "handler"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "unrelated_total"})
	reg.MustRegister(depth, adds, wait, handle, errs, other)
	depth.WithLabelValues("apps/v1/Deployment").Set(3)
	adds.WithLabelValues("apps/v1/Deployment", "high").Add(5)
	adds.WithLabelValues("apps/v1/Deployment", "low").Add(2)
	wait.WithLabelValues("apps/v1/Deployment").Observe(0.1)
	wait.WithLabelValues("apps/v1/Deployment").Observe(0.3)
	handle.WithLabelValues("apps/v1/Deployment", "a").Observe(1)
	handle.WithLabelValues("apps/v1/Deployment", "b").Observe(3)
	errs.WithLabelValues("apps/v1/Deployment", "a").Add(1)
	errs.WithLabelValues("apps/v1/Deployment", "b").Add(2)
	depth.WithLabelValues("v1/ConfigMap").Set(0)
	other.Inc()

	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{Metrics: reg})
	var c dashboard.Controllers
	get(t, srv.URL+"/ui/api/controllers", &c)
	if len(c.Kinds) != 2 || c.Kinds[0].Kind != "apps/v1/Deployment" || c.Kinds[1].Kind != "v1/ConfigMap" {
		t.Fatalf("kinds = %+v, want apps/v1/Deployment and v1/ConfigMap", c.Kinds)
	}
	d := c.Kinds[0]
	if d.QueueDepth != 3 || d.Adds != 7 || d.Handled != 2 || d.Errors != 3 || d.WaitMean < 0.199 || d.WaitMean > 0.201 || d.HandleMean != 2 {
		t.Errorf("Deployment line = %+v", d)
	}
	// Handler a took 1 s, b 3 s: of the two, the 50th percentile is at
	// the bound 1 (one of two at or below it), the 90th and 99th inside
	// (2,4]: 2 + 2*(1.8-1)/1 and 2 + 2*(1.98-1)/1.
	if p := d.Handle; p.P50 != 1 || p.P90 < 3.599 || p.P90 > 3.601 || p.P99 < 3.959 || p.P99 > 3.961 || p.Above {
		t.Errorf("Deployment handling percentiles = %+v, want 1, 3.6, 3.96", p)
	}
	// With the default buckets, 0.1 s is in (0.05,0.1] and 0.3 s in
	// (0.25,0.5].
	if p := d.Wait; !near(p.P50, 0.1) || !near(p.P90, 0.45) || !near(p.P99, 0.495) {
		t.Errorf("Deployment waiting percentiles = %+v, want 0.1, 0.45, 0.495", p)
	}
	if c.Loop == nil || c.Loop.State != "Running" || c.Loop.Processed == 0 {
		t.Errorf("loop line = %+v", c.Loop)
	}
	var r dashboard.Replicas
	get(t, srv.URL+"/ui/api/replicas", &r)
	if r.Mode != "single" || !r.Holding {
		t.Errorf("replicas = %+v, want one replica", r)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
