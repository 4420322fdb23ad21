package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestAnOperatorWithoutASchedulerGetsTheOtherViews: an operator that runs
// no KV scheduler (controllers and an event loop only) still serves the
// dashboard: the API answers an empty graph and the other views, and the
// page, in a browser, leaves the graph out, opens on the controllers and
// follows the loop's events live.
func TestAnOperatorWithoutASchedulerGetsTheOtherViews(t *testing.T) {
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lariat_queue_depth"}, []string{"gvk"})
	reg.MustRegister(depth)
	depth.WithLabelValues("v1/ConfigMap").Set(2)
	d, err := dashboard.New(dashboard.Options{Loop: f.loop, Metrics: reg})
	if err != nil {
		t.Fatalf("a dashboard without a scheduler: %v", err)
	}
	srv := serve(t, d)
	var info dashboard.Info
	get(t, srv+"/ui/api/info", &info)
	if info.HasScheduler || !info.HasLoop || !info.HasMetrics {
		t.Errorf("info %+v, want no scheduler, a loop and metrics", info)
	}
	var g dashboard.Graph
	get(t, srv+"/ui/api/graph", &g)
	if len(g.Nodes) != 0 || g.Txn != -1 {
		t.Errorf("graph %+v, want no values and no transaction", g)
	}
	var c dashboard.Controllers
	get(t, srv+"/ui/api/controllers", &c)
	if len(c.Kinds) != 1 || c.Kinds[0].QueueDepth != 2 || c.Loop == nil {
		t.Errorf("controllers %+v, want the ConfigMap line and the loop", c)
	}

	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the controllers view, open", `document.getElementById("tab-controllers").classList.contains("active") &&
		document.querySelectorAll('#controllers tr[data-kind="v1/ConfigMap"]').length === 1`)
	if !browsertest.Eval[bool](t, page, `document.querySelector('#tabs button[data-tab="graph"]').hidden`) {
		t.Error("the page offers a graph without a scheduler")
	}
	browsertest.Wait[bool](t, page, "the page to follow the stream", `document.getElementById("live").className === "on"`)
	f.push(t, eventlooptest.NewUpdate("put db/late"))
	browsertest.Wait[bool](t, page, "the new event in the events view", `[...document.querySelectorAll("#events li")].some((l) => l.textContent.includes("put db/late"))`)
}

// serve mounts d on a test server and returns its URL.
func serve(t *testing.T, d *dashboard.Dashboard) string {
	t.Helper()
	mux := http.NewServeMux()
	d.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}
