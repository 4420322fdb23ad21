package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestAdvTimeTravelShowsThePastDetail: time travel is to show the graph
// exactly as the snapshot after the chosen transaction, and the detail of
// the selected value "its state then, not now" (app.js). A value's live
// detail asked for before the travel and answered after it (or the 200 ms
// refresh a live transaction schedules, which does not look at travel when
// it fires) replaces the past detail: here the slider is at the
// transaction after which app/a was PENDING, and the detail pane shows it
// CONFIGURED, with today's timeline and objects.
func TestAdvTimeTravelShowsThePastDetail(t *testing.T) {
	f := newFixture(t)
	f.put(t, "app/a", "v") // PENDING: waits for db/a
	pendingAt := f.s.TransactionHistory(zeroTime, zeroTime)
	past := pendingAt[len(pendingAt)-1].SeqNum
	f.put(t, "db/a", "v")                                    // app/a CONFIGURED
	slow, srv := f.serveHeld(t, func(r *http.Request) bool { // the first value detail
		return r.URL.Path == dashboard.Path+"api/value"
	})

	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "app/a CONFIGURED, live", `(r => !!r && r.dataset.state === "CONFIGURED")(document.querySelector('#attention .row[data-key="app/a"]'))`)
	// Mark when the page has handled the answer to a value request: a task
	// queued after the fetch's json() resolves runs after its handlers.
	browsertest.Eval[bool](t, page, `(() => { const f = window.fetch; window.valueAnswered = false;
		window.fetch = (u, o) => f(u, o).then(r => { if (String(u).includes("api/value")) { const j = r.json.bind(r);
			r.json = () => j().then(v => { setTimeout(() => { window.valueAnswered = true; }, 0); return v; }); } return r; });
		return true; })()`)
	browsertest.Eval[bool](t, page, `(document.querySelector('#attention .row[data-key="app/a"]').click(), true)`)
	select {
	case <-slow.captured: // the live detail (CONFIGURED) is on its way
	case <-time.After(2 * time.Minute):
		t.Fatal("the page never asked for app/a's detail")
	}
	browsertest.Eval[bool](t, page, `(() => { const s = document.getElementById("travel");
		s.value = String(window.lariatDashboard.travelSeqs.indexOf(`+itoa(past)+`)); s.dispatchEvent(new Event("input")); return true; })()`)
	browsertest.Wait[bool](t, page, "the past detail of app/a", `(b => !!b && b.textContent === "PENDING")(document.querySelector("#detail .badge"))`)
	close(slow.release)
	browsertest.Wait[bool](t, page, "the late live detail handled", `window.valueAnswered`)
	label := browsertest.Eval[string](t, page, `document.getElementById("travel-label").textContent`)
	detail := browsertest.Eval[string](t, page, `document.getElementById("detail").innerText`)
	badge := browsertest.Eval[string](t, page, `document.querySelector("#detail .badge").textContent`)
	if !strings.Contains(label, "after transaction #"+itoa(past)) {
		t.Fatalf("not travelling to #%d any more: %q", past, label)
	}
	if badge != "PENDING" {
		t.Errorf("%s; the detail of app/a shows %s (as now), it was PENDING then:\n%s", label, badge, detail)
	}
}
