package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestOrderingOnlyDependencyIsDrawnApart: web/1 requires app/1 and is
// ordered after cfg/1 (ordering only). The graph's answer says which edge
// is ordering only, and the page draws that edge apart (class ordering,
// a hollow arrowhead) and says it in the value's detail.
func TestOrderingOnlyDependencyIsDrawnApart(t *testing.T) {
	f := newFixture(t)
	web := f.sb.Descriptor("web", "web/")
	web.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Key: "app/1"}, {Key: "cfg/1", Kind: kvscheduler.OrderingOnly}}
	}
	for _, d := range []*kvscheduler.Descriptor{web, f.sb.Descriptor("cfg", "cfg/")} {
		if err := f.s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"db/1", "app/1", "cfg/1", "web/1"} {
		f.put(t, k, "v")
	}
	_, srv := f.dashboard(t, dashboard.Options{})
	var g dashboard.Graph
	get(t, srv.URL+"/ui/api/graph", &g)
	edges := map[string]bool{} // key -> ordering
	for _, n := range g.Nodes {
		if n.Key == "web/1" {
			for _, e := range n.Deps {
				edges[e.Key] = e.Ordering
			}
		}
	}
	if ordering, ok := edges["cfg/1"]; !ok || !ordering {
		t.Errorf("web/1's edge to cfg/1: ordering %v (present %v), want an ordering-only edge", ordering, ok)
	}
	if ordering, ok := edges["app/1"]; !ok || ordering {
		t.Errorf("web/1's edge to app/1: ordering %v (present %v), want a requires edge", ordering, ok)
	}

	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the graph drawn", `document.querySelectorAll("#graph g.node").length === 4`)
	ordering := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph path.edge.ordering[marker-end='url(#arrow-ordering)']").length`)
	all := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph path.edge").length`)
	if ordering != 1 || all != 3 {
		t.Errorf("%d ordering-only edges of %d drawn, want 1 of 3 (web/1 -> cfg/1; web/1 -> app/1 and app/1 -> db/1 require)", ordering, all)
	}
	browsertest.Click(t, page, `#graph g.node[data-key="web/1"]`)
	detail := browsertest.Wait[string](t, page, "the detail of web/1",
		`document.querySelector('#detail h2[data-key="web/1"]') && document.querySelector("#detail").textContent`)
	if !strings.Contains(detail, "cfg/1 (ordering only)") || !strings.Contains(detail, "app/1 (requires)") {
		t.Errorf("the detail of web/1 does not tell the kinds of its dependencies: %q", detail)
	}
	browsertest.Screenshot(t, page, "dashboard-ordering-only")
}
