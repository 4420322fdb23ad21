// Package browsertest starts a real headless Chromium for the dashboard's
// browser tests, driven over the DevTools protocol by chromedp.
//
// Chromium is Debian's chromium package (scripts/install-chromium.sh, which
// `make test` runs, installs it); LARIAT_CHROMIUM names another binary. A
// test that needs a browser fails, with how to get one, when there is none:
// it does not skip, since a skipped browser test proves nothing.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Wait polls the JavaScript expression in the page until it is truthy and
// returns its value, or fails the test with what after within (a bound on
// waiting for a condition, as controlplanetest.Eventually's, not on how
// fast the page is).
func Wait[T any](t testing.TB, ctx context.Context, what, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expression, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expression, err)
	}
	return v
}

// Eval evaluates the JavaScript expression in the page.
func Eval[T any](t testing.TB, ctx context.Context, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// within bounds every wait for the page: generous, because the machine
// may be loaded; a page that works answers in well under a second.
const within = 2 * time.Minute

// Binary returns the path of the Chromium to run.
func Binary() (string, error) {
	if p := os.Getenv("LARIAT_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: run scripts/install-chromium.sh (make test does), or set LARIAT_CHROMIUM to a Chromium binary")
}

// Start starts a headless Chromium with a fresh profile for the test and
// returns the context of its first tab; both end with the test.
func Start(t testing.TB) context.Context {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1600, 1000),
	}
	// Chromium now and then dies as it starts on a loaded machine (seen
	// under crashpad with no other cause): a launch that fails is tried
	// again, a few times, with each failure logged, before the test fails.
	const launches = 3
	for attempt := 1; ; attempt++ {
		ctx, stop, err := launch(t, opts)
		if err == nil {
			t.Cleanup(stop)
			return ctx
		}
		stop()
		if attempt == launches {
			t.Fatalf("start Chromium (%s), %d attempts: %v", bin, launches, err)
		}
		t.Logf("start Chromium (%s), attempt %d: %v", bin, attempt, err)
	}
}

// launch starts one browser and navigates its first tab to a blank page,
// which starts the browser now, so that a missing or broken Chromium
// fails here; stop ends the browser.
func launch(t testing.TB, opts []chromedp.ExecAllocatorOption) (context.Context, func(), error) {
	// A fresh profile each time: a browser that died may have left its
	// profile locked.
	opts = append(slices.Clip(opts), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	stop := func() { cancel(); cancelAlloc() }
	return ctx, stop, chromedp.Do(ctx, chromedp.Navigate("about:blank"))
}

// Screenshot saves a full-page screenshot as name.png in the directory
// $LARIAT_SCREENSHOTS names (`make screenshots` sets it to docs/images);
// without it, it does nothing.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LARIAT_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// Click clicks the element selector matches, as a user's mouse would, and
// tries again while the page replaced the element it found between finding
// and clicking it (a live graph redraws its nodes when the scheduler's state
// changes; the redrawn node is the same one to the user). Any other error,
// or no element within the bound, fails the test.
func Click(t testing.TB, ctx context.Context, selector string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector)))
		if err == nil {
			return
		}
		if !staleNode(err) || time.Now().After(deadline) {
			t.Fatalf("clicking %s: %v", selector, err)
		}
	}
}

// staleNode says whether err is the DevTools protocol's answer for a DOM
// node the page removed after chromedp found it.
func staleNode(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Could not find node with given id") || strings.Contains(msg, "Node is detached from document") ||
		strings.Contains(msg, "No node with given id found")
}
