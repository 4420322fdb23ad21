// Package signals gives an operator's main a context that ends on SIGINT
// (Ctrl-C) or SIGTERM (a pod being stopped), the way wrangler's
// signals.SetupSignalContext does: the first signal starts a clean stop, a
// second one exits at once, for an operator whose stop hangs.
//
// Unlike wrangler's, it keeps no package-level state: Context may be called
// more than once (each call has its own context), and its stop function
// releases the signals again, which makes it usable in tests.
package signals

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ExitCode is the status the process exits with on a second signal. It is
// that of a program killed by SIGINT in a shell, so scripts see an
// interrupted run rather than a failure of the operator's own.
const ExitCode = 130

// Context returns a context that ends, with a cause naming the signal, on
// the first SIGINT or SIGTERM; a second one exits the process with
// ExitCode. stop releases the signals (the default behaviour of ending the
// process returns) and ends the context; call it when main returns.
func Context(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return notify(parent, func() { os.Exit(ExitCode) }, os.Interrupt, syscall.SIGTERM)
}

// notify is Context with the exit on a second signal and the signals to
// listen to given, so that tests can see both without ending the process.
func notify(parent context.Context, exit func(), sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(fmt.Errorf("received signal %v: %w", s, context.Canceled))
		case <-done:
			return
		}
		select {
		case <-ch:
			exit()
		case <-done:
		}
	}()
	// Once, since a CancelFunc may be called by several goroutines at once.
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
		cancel(context.Canceled)
	}
}
