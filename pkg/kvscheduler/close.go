package kvscheduler

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// descCall names a descriptor call in progress, for the error of a Close
// that timed out waiting for it.
type descCall struct {
	descriptor string
	op         string
	key        string // empty for Retrieve
}

func (c *descCall) String() string {
	if c.key == "" {
		return fmt.Sprintf("descriptor %q: %s", c.descriptor, c.op)
	}
	return fmt.Sprintf("descriptor %q: %s of %q", c.descriptor, c.op, c.key)
}

// calling records that the worker enters a descriptor callback that may
// block (one that talks to the southbound), for Close to name it; returned
// records that the callback returned. The call is kept in the scheduler,
// under a mutex, rather than allocated per call: a batch makes a
// descriptor call per value. Only the worker makes calls, one at a time,
// so the call returned is always the one recorded. No start time is kept:
// reading the clock cost a batch more than the rest of the bookkeeping,
// and a call Close names has run at least as long as Close waited.
func (s *Scheduler) calling(d *regDescriptor, op, key string) {
	s.callMu.Lock()
	s.callNow = descCall{descriptor: d.Name, op: op, key: key}
	s.callMu.Unlock()
}

// returned records that the call in progress returned.
func (s *Scheduler) returned() {
	s.callMu.Lock()
	s.callNow = descCall{}
	s.callMu.Unlock()
}

// callInProgress returns the descriptor call in progress, if any.
func (s *Scheduler) callInProgress() (descCall, bool) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	return s.callNow, s.callNow.op != ""
}

// Context returns the scheduler's lifetime context, cancelled as soon as
// Close is called. It is the context of the descriptor callbacks of work no
// caller waits for (NonBlocking transactions, retries, notifications,
// registrations); the callbacks of a blocking Commit get one that also ends
// with the Commit's ctx. Either ends when Close begins, so that Close ends
// a request in flight instead of waiting for it. Requests a descriptor
// makes outside those callbacks (from a ValueComparator, say) can derive
// their contexts from this one.
func (s *Scheduler) Context() context.Context { return s.ctx }

// txnContext returns the context of a transaction's descriptor callbacks:
// for a blocking Commit (caller not nil), one that ends when the caller's
// ends or the scheduler closes (with ErrClosed as its cause); otherwise the
// lifetime context. The values of the caller's context are kept, so that
// callbacks see, say, its trace. done releases it.
func (s *Scheduler) txnContext(caller context.Context) (ctx context.Context, done func()) {
	if caller == nil {
		return s.ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(caller)
	stop := context.AfterFunc(s.ctx, func() { cancel(ErrClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// ctxError is why ctx ended: its error, wrapping its cause too when that
// says more (ErrClosed when the scheduler closed).
func ctxError(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, err) {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// Exited is closed once the scheduler's goroutine has returned after
// Close, which may be after Close itself returned: a descriptor call that
// outlived Options.CloseTimeout is abandoned, not stopped, and whoever
// holds what that call may still write (a field manager) frees it here.
func (s *Scheduler) Exited() <-chan struct{} { return s.exited }

// Close stops the scheduler: it cancels Context, drops the queued work
// (blocked Commits return ErrClosed), stops the timers, waits for the
// operation in progress and closes the watches. The wait is bounded by
// Options.CloseTimeout (real time, whatever Options.Clock is): a
// descriptor call that has not returned by then is abandoned on the
// scheduler's goroutine, its transaction's Commit returns ErrClosed, and
// Close returns an error wrapping ErrCloseTimeout that names the call.
// Close is idempotent; only the first call can return an error.
func (s *Scheduler) Close() error {
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return nil
	}
	s.closed = true
	pending := s.queue
	s.queue = nil
	if s.trimTimer != nil {
		s.trimTimer.Stop()
	}
	for _, j := range s.retries {
		j.timer.Stop()
	}
	s.qmu.Unlock()
	s.cancel()
	close(s.quit)
	for _, j := range pending {
		j.finish(jobResult{err: ErrClosed})
	}

	var err error
	go func() {
		s.wg.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(s.opts.CloseTimeout)
	select {
	case <-s.exited:
		timer.Stop()
	case <-timer.C:
		what := "the scheduler's goroutine (no descriptor call in progress)"
		if c, ok := s.callInProgress(); ok {
			what = c.String()
		}
		err = fmt.Errorf("%w after %v: %s has not returned; it is abandoned", ErrCloseTimeout, s.opts.CloseTimeout, what)
		s.qmu.Lock()
		cur := s.cur
		s.qmu.Unlock()
		if cur != nil {
			cur.finish(jobResult{err: fmt.Errorf("%w: %w", ErrClosed, err)})
		}
	}

	s.smu.Lock()
	ws := s.watches
	s.watches = map[*Watch]struct{}{}
	s.watchesClosed = true
	s.smu.Unlock()
	for w := range ws {
		w.Close()
	}
	return err
}
