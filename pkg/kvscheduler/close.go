package kvscheduler

import (
	"context"
	"fmt"
	"time"
)

// descCall names a descriptor call in progress, for the error of a Close
// that timed out waiting for it.
type descCall struct {
	descriptor string
	op         string
	key        string // empty for Retrieve
	began      time.Time
}

func (c *descCall) String() string {
	if c.key == "" {
		return fmt.Sprintf("descriptor %q: %s", c.descriptor, c.op)
	}
	return fmt.Sprintf("descriptor %q: %s of %q", c.descriptor, c.op, c.key)
}

// calling records that the worker enters a descriptor callback that may
// block (one that talks to the southbound); the returned function records
// that it returned.
func (s *Scheduler) calling(d *regDescriptor, op, key string) func() {
	c := &descCall{descriptor: d.Name, op: op, key: key, began: time.Now()}
	s.call.Store(c)
	return func() { s.call.CompareAndSwap(c, nil) }
}

// Context returns the scheduler's lifetime context, cancelled as soon as
// Close is called. Descriptor callbacks get no context of their own: those
// that make requests (such as pkg/kubedescriptor's, with its
// Options.Context) derive their requests' contexts from this one, so that
// Close ends them instead of waiting for them.
func (s *Scheduler) Context() context.Context { return s.ctx }

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
	for t := range s.timers {
		t.Stop()
	}
	s.qmu.Unlock()
	s.cancel()
	close(s.quit)
	for _, j := range pending {
		j.finish(jobResult{err: ErrClosed})
	}

	var err error
	exited := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(exited)
	}()
	timer := time.NewTimer(s.opts.CloseTimeout)
	select {
	case <-exited:
		timer.Stop()
	case <-timer.C:
		what := "the scheduler's goroutine (no descriptor call in progress)"
		if c := s.call.Load(); c != nil {
			what = fmt.Sprintf("%s (called %v ago)", c, time.Since(c.began).Round(time.Millisecond))
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
