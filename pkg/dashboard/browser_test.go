package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestTenThousandValuesInABrowser draws a graph of 10,000 values (5,000
// apps, each depending on its database, 50 of which are missing) in a real
// headless Chromium: it is drawn grouped, the waiting apps are listed first,
// a filter narrows it to single values, and a value can be clicked. It logs
// the time to the first paint and to a filter (measured in the page; a
// measurement, not an assertion).
func TestTenThousandValuesInABrowser(t *testing.T) {
	const apps, missing = 5000, 50
	f := newFixture(t)
	txn := f.s.StartNBTransaction()
	for i := range apps {
		txn.SetValue(fmt.Sprintf("app/%04d", i), "v")
		db := fmt.Sprintf("db/%04d", i)
		if i >= apps-missing {
			db = fmt.Sprintf("db/spare-%04d", i) // app/i waits for db/i
		}
		txn.SetValue(db, "v")
	}
	if _, err := txn.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, srv := f.dashboard(t, dashboard.Options{OwnerOf: func(key string) string {
		var n int
		fmt.Sscanf(key[strings.LastIndex(key, "/")+1:], "%d", &n)
		return fmt.Sprintf("team-%02d", n%20)
	}})
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	paint := browsertest.Wait[float64](t, page, "the first paint of the graph", `window.lariatDashboard && window.lariatDashboard.firstPaintMs`)
	counts := browsertest.Wait[string](t, page, "all values counted", `(s => s.startsWith("10000 of 10000") && s)(document.getElementById("counts").textContent)`)
	// Drawn as groups, whose totals are every value.
	total := browsertest.Eval[int](t, page, `[...document.querySelectorAll("#graph g.group")].reduce((n, g) => n + Number(g.dataset.total), 0)`)
	if total != 2*apps {
		t.Errorf("the groups hold %d values, want %d (%s)", total, 2*apps, counts)
	}
	if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph g.node").length`); n != 0 {
		t.Errorf("%d values drawn one by one, want groups only", n)
	}
	first := browsertest.Eval[string](t, page, `[...document.querySelectorAll("#attention .row")].slice(0, 50).map(r => r.dataset.state).join(" ")`)
	if first != strings.TrimSpace(strings.Repeat("PENDING ", missing)) {
		t.Errorf("the first 50 values listed are %q, want the 50 waiting ones", first)
	}
	browsertest.Screenshot(t, page, "dashboard-10000")

	filter := browsertest.Eval[float64](t, page, `new Promise(done => {
		const t0 = performance.now(), e = document.getElementById("filter-prefix");
		e.value = "app/004"; e.dispatchEvent(new Event("input"));
		requestAnimationFrame(() => done(performance.now() - t0));
	})`)
	if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph g.node").length`); n != 10 {
		t.Errorf("after filtering on app/004, %d values drawn, want 10", n)
	}
	key := "app/0049"
	browsertest.Click(t, page, fmt.Sprintf(`#graph g.node[data-key=%q]`, key))
	reason := browsertest.Wait[string](t, page, "the detail of "+key,
		fmt.Sprintf(`document.querySelector('#detail h2[data-key=%q]') && document.querySelector("#detail").textContent`, key))
	if !strings.Contains(reason, "CONFIGURED") {
		t.Errorf("the detail of %s: %q", key, reason)
	}
	t.Logf("10,000 values: first paint %.0f ms after navigation, filter to 10 values %.0f ms (page render %.1f ms)",
		paint, filter, browsertest.Eval[float64](t, page, `window.lariatDashboard.lastRenderMs`))
}
