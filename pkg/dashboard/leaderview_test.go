package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestLeaderReplicasViewInABrowser: under leader election (the WebApp
// example's Options.Replicas), the replicas view names this replica, the
// leader and whether this replica holds the Lease; the sharded view's
// tables are not shown.
func TestLeaderReplicasViewInABrowser(t *testing.T) {
	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{Replicas: func() dashboard.Replicas {
		return dashboard.Replicas{Mode: "leader", Identity: "pod-b", Leader: "pod-a", Holding: false,
			Members: []dashboard.Member{{ID: "pod-a", Share: 1, Leader: true}}}
	}})
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.Click(chromedp.CSS(`#tabs button[data-tab="replicas"]`))); err != nil {
		t.Fatal(err)
	}
	text := browsertest.Wait[string](t, page, "the replicas view", `document.querySelector("#leader") && document.querySelector("#replicas").textContent`)
	for _, want := range []string{"elect a leader", "This replica: pod-b (standing by)", "Leader: pod-a", "pod-a (leader)", "100%"} {
		if !strings.Contains(text, want) {
			t.Errorf("the replicas view does not say %q: %q", want, text)
		}
	}
	if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#members, #drains").length`); n != 0 {
		t.Errorf("the leader view shows %d sharded tables", n)
	}
}
