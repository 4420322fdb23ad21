package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestAdvTenThousandValuesOfOneKindAreGrouped: above 300 values the page is
// to draw groups "instead of laying out 10,000 nodes" (docs/dashboard.md).
// With one descriptor and no OwnerOf (an operator of one kind, in one
// namespace) auto grouping falls back to the first key segment that
// differs, which is the last one: every group holds one value, and the
// page lays out and draws 10,000 boxes, the very thing grouping is for.
func TestAdvTenThousandValuesOfOneKindAreGrouped(t *testing.T) {
	const values = 10000
	f := newFixture(t)
	txn := f.s.StartNBTransaction()
	for i := range values {
		txn.SetValue(fmt.Sprintf("db/%05d", i), "v")
	}
	if _, err := txn.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, srv := f.dashboard(t, dashboard.Options{})
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[string](t, page, "all values counted", `(s => s.startsWith("10000 of 10000") && s)(document.getElementById("counts").textContent)`)
	browsertest.Wait[float64](t, page, "the first paint of the graph", `window.lariatDashboard && window.lariatDashboard.firstPaintMs`)
	boxes := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph g.group, #graph g.node").length`)
	singles := browsertest.Eval[int](t, page, `[...document.querySelectorAll("#graph g.group")].filter(g => g.dataset.total === "1").length`)
	ms := browsertest.Eval[float64](t, page, `window.lariatDashboard.lastRenderMs`)
	t.Logf("%d values drawn as %d boxes, %d of them groups of one; a render took %.0f ms", values, boxes, singles, ms)
	if boxes > 300 {
		t.Errorf("%d values are drawn as %d boxes (%d groups of a single value): not grouped", values, boxes, singles)
	}
}
