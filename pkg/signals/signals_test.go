package signals

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// raise sends sig to this process. With the signal handed to a channel by
// signal.Notify, the process is not stopped by it.
func raise(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

// TestFirstSignalEndsTheContextSecondExits: the first signal ends the
// context with a cause naming it; the second calls exit.
func TestFirstSignalEndsTheContextSecondExits(t *testing.T) {
	exited := make(chan struct{})
	ctx, stop := notify(context.Background(), func() { close(exited) }, syscall.SIGUSR1)
	defer stop()

	raise(t, syscall.SIGUSR1)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context did not end on the first signal")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) || !strings.Contains(cause.Error(), "user defined signal 1") {
		t.Errorf("cause %q, want it to name the signal and wrap context.Canceled", cause)
	}
	select {
	case <-exited:
		t.Fatal("exited on the first signal")
	default:
	}

	raise(t, syscall.SIGUSR1)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("a second signal did not exit")
	}
}

// TestStopReleasesTheSignals: after stop, the context has ended and a
// signal reaches no one of ours (exit is not called; the test process
// ignores SIGUSR2 through a second, independent Notify so it survives).
func TestStopReleasesTheSignals(t *testing.T) {
	keepAlive, stopKeepAlive := notify(context.Background(), func() {}, syscall.SIGUSR2)
	defer stopKeepAlive()

	exited := make(chan struct{}, 2)
	ctx, stop := notify(context.Background(), func() { exited <- struct{}{} }, syscall.SIGUSR2)
	stop()
	if ctx.Err() == nil {
		t.Fatal("the context did not end with stop")
	}
	raise(t, syscall.SIGUSR2)
	raise(t, syscall.SIGUSR2)
	<-keepAlive.Done() // the signals were delivered
	select {
	case <-exited:
		t.Fatal("a stopped context's signals still call exit")
	case <-time.After(100 * time.Millisecond):
	}
	stop() // a second stop is harmless
}

// TestContextsAreIndependent: two calls give two contexts, each ended by
// its own stop (wrangler's SetupSignalContext panics on a second call).
func TestContextsAreIndependent(t *testing.T) {
	a, stopA := Context(context.Background())
	b, stopB := Context(context.Background())
	defer stopB()
	stopA()
	if a.Err() == nil {
		t.Fatal("stop did not end its context")
	}
	if b.Err() != nil {
		t.Fatal("stopping one context ended the other")
	}
}

// TestStopMayBeCalledConcurrently holds stop to context.CancelFunc's
// contract: it may be called by several goroutines at once.
func TestStopMayBeCalledConcurrently(t *testing.T) {
	for range 2000 {
		_, stop := notify(context.Background(), func() { t.Error("exit called") }, syscall.SIGUSR2)
		start := make(chan struct{})
		done := make(chan struct{})
		for range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				<-start
				stop()
			}()
		}
		close(start)
		for range 4 {
			<-done
		}
	}
}
