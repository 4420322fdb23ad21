package controller

import (
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The user code a pass calls besides its handlers and Gate (h30b, after
// h30a's panicking Gate): a PassTracker's Handling and the done it
// returns, and the kind's rate limiter. A panic in any of them must be
// recovered as a handler's is, not escape the worker's goroutine and end
// the process. Each runs in a child process (the test binary again), so
// that a panic that escapes fails the test with its message instead of
// ending the whole test binary.

// TestAdv4APassTrackerWhoseHandlingPanicsDoesNotKillTheProcess: the
// tracker's first Handling panics; the pass fails with that as its error,
// and the key's retry calls Handling again and runs the handler.
func TestAdv4APassTrackerWhoseHandlingPanicsDoesNotKillTheProcess(t *testing.T) {
	adv4InChild(t, "TestAdv4APassTrackerWhoseHandlingPanicsDoesNotKillTheProcess", func(t *testing.T) {
		var calls atomic.Int32
		tracker := adv4Tracker(func() func() {
			if calls.Add(1) == 1 {
				panic("the tracker's first Handling panics")
			}
			return func() {}
		})
		handled := make(chan struct{}, 1)
		c := adv3ControllerOf(t, []string{"k"}, &Options{Passes: tracker, Resource: adv4Resource}, func(string) {
			select {
			case handled <- struct{}{}:
			default:
			}
		})
		if err := c.Start(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		adv4Wait(t, handled, "the handler to run on the retry after Handling panicked")
		if n := calls.Load(); n < 2 {
			t.Fatalf("the handler ran after %d Handling calls, want the retry's (2)", n)
		}
	})
}

// TestAdv4APassTrackerWhoseDonePanicsDoesNotKillTheProcess: the done of
// the first pass panics after the handler returned; the panic is logged
// (not retried: the handler's work is done, see
// TestAdv5ADeletionWhoseTrackerDonePanicsIsToldOnce), and the worker
// lives on: an Enqueue afterwards runs a second pass (a second Handling).
func TestAdv4APassTrackerWhoseDonePanicsDoesNotKillTheProcess(t *testing.T) {
	adv4InChild(t, "TestAdv4APassTrackerWhoseDonePanicsDoesNotKillTheProcess", func(t *testing.T) {
		var calls atomic.Int32
		panicking, again := make(chan struct{}), make(chan struct{})
		tracker := adv4Tracker(func() func() {
			switch calls.Add(1) {
			case 1:
				return func() { close(panicking); panic("the first pass's done panics") }
			case 2:
				close(again)
			}
			return func() {}
		})
		c := adv3ControllerOf(t, []string{"k"}, &Options{Passes: tracker, Resource: adv4Resource}, func(string) {})
		if err := c.Start(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		adv4Wait(t, panicking, "the first pass's done")
		c.Enqueue("ns", "k")
		adv4Wait(t, again, "the Handling of a pass after an Enqueue, once the first pass's done panicked")
	})
}

// TestAdv4ARateLimiterThatPanicsDoesNotKillTheProcess: every method of
// the kind's rate limiter panics. The handler fails once (When is asked
// for the retry's delay, and NumRequeues for the error line), then
// succeeds (Forget); the key is still retried, and an Enqueue afterwards
// runs the handler again: the worker outlived each panic.
func TestAdv4ARateLimiterThatPanicsDoesNotKillTheProcess(t *testing.T) {
	adv4InChild(t, "TestAdv4ARateLimiterThatPanicsDoesNotKillTheProcess", func(t *testing.T) {
		var calls atomic.Int32
		forgot := make(chan struct{})
		limiter := &adv4PanickingLimiter{forgot: forgot}
		passes := make(chan struct{}, 3)
		c := adv3ControllerOf(t, []string{"k"}, &Options{RateLimiter: limiter}, func(string) {
			if calls.Add(1) == 1 {
				panic("the handler fails its first pass")
			}
			passes <- struct{}{}
		})
		if err := c.Start(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		adv4Wait(t, passes, "the retry of the failed pass, whose delay the limiter's When panicked on")
		adv4Wait(t, forgot, "the limiter's Forget after the retry succeeded")
		c.Enqueue("ns", "k")
		adv4Wait(t, passes, "a pass after an Enqueue, once Forget panicked")
		if limiter.when.Load() == 0 {
			t.Fatal("the retry never asked the limiter's When: the test did not test it")
		}
	})
}

// adv4InChild runs child in a child process running only test name, and
// fails with the child's first panic line when the child fails.
func adv4InChild(t *testing.T, name string, child func(t *testing.T)) {
	t.Helper()
	if os.Getenv("LARIAT_ADV4_CHILD") == name {
		child(t)
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LARIAT_ADV4_CHILD="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := string(out)
		if i := strings.Index(first, "panic:"); i >= 0 {
			first, _, _ = strings.Cut(first[i:], "\n")
		}
		t.Fatalf("the child process failed (%v): %s", err, first)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child process did not run %s:\n%s", name, out)
	}
}

// adv4Wait waits for ch, for long enough for a busy machine.
func adv4Wait[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// adv4Resource names the kind as the PassTracker is told it.
func adv4Resource() (schema.GroupResource, error) {
	return schema.GroupResource{Resource: "configmaps"}, nil
}

// adv4Tracker is a PassTracker whose Handling is h.
type adv4Tracker func() func()

func (h adv4Tracker) Handling(ObjectRef, string) func() { return h() }

// adv4PanickingLimiter is a rate limiter every method of which panics;
// it counts the calls of When and closes forgot at the first Forget.
type adv4PanickingLimiter struct {
	when   atomic.Int32
	forgot chan struct{}
	once   atomic.Bool
}

func (l *adv4PanickingLimiter) When(string) time.Duration {
	l.when.Add(1)
	panic("the limiter's When panics")
}

func (l *adv4PanickingLimiter) Forget(string) {
	if l.once.CompareAndSwap(false, true) {
		close(l.forgot)
	}
	panic("the limiter's Forget panics")
}

func (l *adv4PanickingLimiter) NumRequeues(string) int { panic("the limiter's NumRequeues panics") }
