package controlplanetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// StopTimeout bounds how long Run's cleanup waits for an operator to
// return once its context ended.
const StopTimeout = 30 * time.Second

// Run runs an operator for the rest of the test: run is called in a
// goroutine with t.Context(), which ends when the test's cleanup begins,
// and must return soon after that (an operator's Run method, say). A
// cleanup waits for it, so the operator has stopped before the control
// plane does: Start's control plane is stopped by a cleanup registered
// earlier, hence run later, and Main stops its control plane only after
// every test and its cleanups are done. Nothing is then left to list,
// watch or retry against a stopped API server, which would log
// "connection refused" after the tests.
//
// An error run returns fails the test, unless it is the context's
// cancellation after the test ended; so does an operator that has not
// returned StopTimeout after its context ended. An operator whose start
// returns once it runs (a generic.Factory's Start) needs no Run: start it
// with t.Context().
func Run(t testing.TB, run func(ctx context.Context) error) {
	t.Helper()
	ctx := t.Context()
	var (
		mu        sync.Mutex
		abandoned bool // the cleanup gave up: t must not be used any more
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := run(ctx)
		if err == nil || ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !abandoned {
			t.Errorf("operator: %v", err)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(StopTimeout):
			mu.Lock()
			abandoned = true
			mu.Unlock()
			t.Errorf("operator still running %s after its context ended; the control plane stops under it", StopTimeout)
		}
	})
}

// Eventually polls cond until it holds, and fails the test, naming what it
// waited for, if it does not within timeout. Tests against a control plane
// wait for what the API server and the informers reach in their own time.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
