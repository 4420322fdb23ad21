package kvscheduler_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Selectors given by callers of the scheduler's read API were not guarded
// as descriptor callbacks are ("no panic in library code for bad input"):
// a WatchValueStatus selector that panicked on some key panicked on the
// scheduler's goroutine, which crashed the process (fixed: the watch ends
// with an error); a ValueStatuses selector that panicked left the status
// lock read-locked (no deferred unlock, fixed), so that once the caller
// recovered (as net/http does for a handler) the scheduler's next publish
// waited for ever, and every reader with it.

// advWatchPanicChild is the child process's scenario of
// TestAdvPanickingWatchSelectorDoesNotCrash.
const advWatchPanicChild = "LARIAT_ADV_WATCH_PANIC_CHILD"

func TestAdvPanickingWatchSelectorDoesNotCrash(t *testing.T) {
	if os.Getenv(advWatchPanicChild) != "" {
		sb := kvtest.New()
		s := newSched(t, kvscheduler.Options{})
		register(t, s, sb.Descriptor("x", "x/"))
		w := s.WatchValueStatus(context.Background(), func(k string) bool { return k[:5] == "x/abc" }) // short keys panic
		defer w.Close()
		_ = set(t, s, "x/1", "a")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAdvPanickingWatchSelectorDoesNotCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), advWatchPanicChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(string(out), "\n")
		if len(lines) > 12 {
			lines = lines[:12]
		}
		t.Errorf("the process running a scheduler with a panicking watch selector died (%v):\n%s", err, strings.Join(lines, "\n"))
	}
}

func TestAdvPanickingStatusSelectorDoesNotHangTheScheduler(t *testing.T) {
	sb := kvtest.New()
	// Not closed by a cleanup: Close hangs too once the defect shows.
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	register(t, s, sb.Descriptor("x", "x/"))
	mustSet(t, s, "x/1", "a")
	func() {
		defer func() { _ = recover() }() // as net/http recovers a handler's panic
		s.ValueStatuses(func(k string) bool { panic("bad selector") })
	}()
	// The guards below only catch the hang, as eventually's deadline does.
	done := make(chan error, 1)
	go func() { done <- set(t, s, "x/2", "b") }()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(20 * time.Second):
		t.Error("Commit did not return: the scheduler waits for the status lock the panicking selector left held")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Error("Close did not return either (Options.CloseTimeout is 10s)")
	}
}
