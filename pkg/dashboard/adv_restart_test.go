package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestAdvAPageFollowsAnOperatorThatRestartedAndGotAhead: a new operator
// (a new term, numbering from 0 again) that has already processed more
// events than the page had seen when the page reconnects is taken for the
// old one: the page asks for what follows its old numbers, the stream
// starts there, and the page can only detect a restart from numbers lower
// than its own (hello). The new operator's first events and transactions
// are neither shown nor counted in a marker, the old operator's stay in
// the feeds under the same numbers, and the time-travel slider mixes the
// two terms' transaction numbers.
func TestAdvAPageFollowsAnOperatorThatRestartedAndGotAhead(t *testing.T) {
	srv, serve := swappableServer(t)
	old := newFixture(t)
	for i := range 3 {
		old.push(t, eventlooptest.NewUpdate(fmt.Sprintf("put db/old-%d", i)))
	}
	serve(old)
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the old operator's last event", `[...document.querySelectorAll("#events li")].some(e => e.textContent.includes("put db/old-2"))`)

	restarted := newFixture(t)
	for i := range 8 {
		restarted.push(t, eventlooptest.NewUpdate(fmt.Sprintf("put db/new-%d", i)))
	}
	serve(restarted)
	srv.CloseClientConnections()
	browsertest.Wait[bool](t, page, "the new operator's last value", `!!document.querySelector('#graph g.node[data-key="db/new-7"]')`)
	browsertest.Wait[bool](t, page, "the new operator's last event", `[...document.querySelectorAll("#events li")].some(e => e.textContent.includes("put db/new-7"))`)
	feed := browsertest.Eval[string](t, page, `[...document.querySelectorAll("#events li")].map(e => e.textContent).join("\n")`)
	shown := browsertest.Eval[bool](t, page, `[...document.querySelectorAll("#events li")].some(e => e.textContent.includes("put db/new-0"))`)
	marker := browsertest.Eval[bool](t, page, `!!document.querySelector("#events li.dropped")`)
	if !shown && !marker {
		t.Errorf("the new operator's first events (put db/new-0 ...) are neither shown nor counted; the events feed:\n%s", feed)
	}
}
