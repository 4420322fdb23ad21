package eventloop

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStillRunning is matched (errors.Is) by the error Stop returns when
// the loop was still processing an event once Stop's context ended: a
// handler or the commit did not return within the bound. Callers above the
// informers (pkg/dependents) report it as controller.ErrStillRunning, on
// which leader and shard leave their Lease to expire.
var ErrStillRunning = errors.New("eventloop: still processing after the stop's bound")

// StillRunningError names the handler (or "commit") of the event the loop
// was processing when Stop's context ended.
type StillRunningError struct {
	// Loop is the loop's name (Options.Name), empty if unnamed.
	Loop string
	// Event is the name of the event being processed.
	Event string
	// Handler is the handler under way, or "commit".
	Handler string
	// Since is when that call began.
	Since time.Time
}

// Error names the call still under way.
func (e *StillRunningError) Error() string {
	return fmt.Sprintf("eventloop %s: event %s handler %s still running after the stop's bound (since %s)",
		e.Loop, e.Event, e.Handler, e.Since.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrStillRunning) hold.
func (e *StillRunningError) Is(target error) bool { return target == ErrStillRunning }

// busyCall is the handler or commit the loop goroutine is in.
type busyCall struct {
	event, handler string
	since          time.Time
}

// markBusy records that the loop goroutine calls handler for event, until
// the returned function runs.
func (l *Loop) markBusy(event, handler string) (done func()) {
	l.busy.Store(&busyCall{event: event, handler: handler, since: l.clock.Now()})
	return func() { l.busy.Store(nil) }
}

// Stop ends the loop gracefully: it pushes a Shutdown event behind the
// events already queued, waits until it has been processed (or ctx ends),
// then closes the loop and waits for its goroutine to exit (or ctx ends).
// It returns the Shutdown event's error, or the error that prevented
// pushing it. It must not be called from a handler.
//
// Once Start's context has ended, the loop closes itself without a
// Shutdown event (see Start): Stop then only waits for the loop goroutine
// to exit and returns nil, so `defer loop.Stop(ctx)` with Start's ctx is
// quiet however the two interleave. To give handlers their Shutdown event
// when the operator stops, start the loop with a context that outlives
// the signal (context.WithoutCancel) and call Stop with a bounded one.
//
// A ctx live when Stop is called bounds the whole stop: if it ends while a
// handler or the commit still runs, the call is logged at warning level,
// counted (lariat_eventloop_outlived_stop_total) and named in a
// *StillRunningError (errors.Is(err, ErrStillRunning)); the loop goroutine
// exits once that call returns. A ctx already ended (Start's, deferred)
// bounds nothing: Stop waits for the loop goroutine to exit, as Close.
func (l *Loop) Stop(ctx context.Context) error {
	if ctx == nil {
		return errors.New("eventloop: Stop called with a nil context")
	}
	if InLoop(ctx) {
		return ErrWaitInLoop
	}
	// A ctx already ended is Start's in `defer loop.Stop(ctx)`: it does
	// not bound the wait for the loop goroutine.
	bounded := ctx.Err() == nil
	l.lifeMu.Lock()
	running := l.started && !l.closing
	startCtx := l.startCtx
	l.lifeMu.Unlock()
	var err error
	if running && startCtx.Err() == nil {
		err = l.shutdown(ctx)
	}
	if running && startCtx.Err() != nil {
		// Start's context ended meanwhile: the loop closed, or is closing,
		// without the Shutdown event, as it was told to.
		err = nil
	}
	if !bounded {
		return errors.Join(err, l.Close())
	}
	// The Shutdown's error (its wait cut short) stays beside the call
	// still under way.
	return errors.Join(err, l.closeWithin(ctx))
}

// shutdown pushes a Shutdown event and waits for it (or ctx).
func (l *Loop) shutdown(ctx context.Context) error {
	ev := &Shutdown{}
	err := l.push(nil, ev)
	if err == nil {
		return ev.Wait(ctx)
	}
	if errors.Is(err, ErrClosed) {
		// A Shutdown is already queued (or the loop stopped): let it
		// finish rather than cut it short.
		select {
		case <-l.exited:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// closeWithin closes the loop and waits for its goroutine to exit, or for
// ctx to end: then it reports the call still under way.
func (l *Loop) closeWithin(ctx context.Context) error {
	if !l.signalClose() {
		return nil
	}
	select {
	case <-l.exited:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-l.exited:
		return nil
	default:
	}
	e := &StillRunningError{Loop: l.loopName, Event: "?", Handler: "?"}
	if b := l.busy.Load(); b != nil {
		e.Event, e.Handler, e.Since = b.event, b.handler, b.since
	}
	l.log.WithField("event", e.Event).WithField("handler", e.Handler).
		Warnf("eventloop: handler still running after the stop's bound (since %s): the stop waits no longer", e.Since.Format(time.RFC3339))
	l.met.outlivedStop(e.Event, e.Handler)
	return e
}

// Close stops the loop without a Shutdown event: the event being processed
// finishes (its transaction context is cancelled), events still queued get
// Done(ErrClosed), and the loop goroutine exits before Close returns. Close
// is idempotent; it must not be called from a handler.
func (l *Loop) Close() error {
	if l.signalClose() {
		<-l.exited
	}
	return nil
}

// signalClose tells the loop to stop, once: it cancels the transaction
// context of the event at work, or finishes a loop never started. It
// reports whether the loop goroutine was started (and so is to be waited
// for on l.exited).
func (l *Loop) signalClose() (started bool) {
	l.closeOnce.Do(func() {
		l.lifeMu.Lock()
		l.closing = true
		started := l.started
		l.lifeMu.Unlock()
		l.stopFlag.Store(true)
		close(l.stopCh)
		if started {
			// Tell the handler or committer at work to give up.
			l.cancel()
		} else {
			l.finish()
		}
	})
	l.lifeMu.Lock()
	defer l.lifeMu.Unlock()
	return l.started
}
