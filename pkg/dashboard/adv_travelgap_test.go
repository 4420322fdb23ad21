package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestAdvTimeTravelReachesEveryRetainedTransaction: the slider is to redraw
// the graph "as it was right after any retained transaction". The page
// learns transaction numbers only from its first read and from the
// stream; when the stream drops messages (a browser that reads slower than
// the operator works: the case the buffer exists for), the page reloads
// the graph but never the list of transactions, so the dropped ones,
// still retained by the scheduler, cannot be chosen on the slider.
func TestAdvTimeTravelReachesEveryRetainedTransaction(t *testing.T) {
	f := newFixture(t)
	g := &gatedScheduler{Scheduler: f.s}
	d, err := dashboard.New(dashboard.Options{Scheduler: g, Loop: f.loop, StreamBuffer: 2, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the page live", `window.lariatDashboard.connected && window.lariatDashboard.graphLoads >= 1`)
	// The operator works faster than this page reads: 20 transactions
	// arrive between two reads of its stream.
	g.close()
	controlplanetest.Eventually(t, time.Minute, "the stream's reader at the gate", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.waiting > 0
	})
	for i := range 20 {
		f.put(t, fmt.Sprintf("db/burst-%02d", i), "v")
	}
	g.open()
	browsertest.Wait[bool](t, page, "the drop marker", `!!document.querySelector("#txns li.dropped")`)
	last := f.s.TransactionHistory(zeroTime, zeroTime)
	newest := last[len(last)-1].SeqNum
	browsertest.Wait[bool](t, page, "the newest transaction on the slider", fmt.Sprintf(`window.lariatDashboard.travelSeqs.includes(%d)`, newest))
	onSlider := browsertest.Eval[[]uint64](t, page, `window.lariatDashboard.travelSeqs`)
	var missing []uint64
	for _, rec := range last {
		if !slices.Contains(onSlider, rec.SeqNum) {
			missing = append(missing, rec.SeqNum)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the scheduler retains transactions %v that the slider cannot reach (it offers %v)", missing, onSlider)
	}
}
