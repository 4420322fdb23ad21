package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/internal/panicvalue"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// processNext handles one key of r's queue with its worker w; it returns
// false when the queue shut down. Once r's context ended, an error that is
// its cancellation (a request the handler made with the context it was
// registered with) is the stop, not a failure worth an error line.
func (c *controller) processNext(r *run, w *worker) bool {
	ctx, queue := r.ctx, r.queue
	key, ticket, shutdown := queue.GetTicket()
	if shutdown {
		return false
	}
	// By ticket: Done would look the key up in the queue's map again.
	defer queue.DoneTicket(key, ticket)
	// One clock reading serves the pass: a hold counted from its start
	// ends no later than the AddAfter that follows the handlers.
	now := c.now()
	if !w.claim(r, key, now, c.claimAs) {
		// An earlier run, stopping, still handles the key: this run
		// takes it once that pass has ended, never beside it.
		return true
	}
	defer w.release()
	if ctx.Err() != nil {
		// The run is stopping: no handler starts after its context ended
		// (the next run re-queues every cached key, see stopped). Checked
		// after the claim, so that a later run, which starts only once
		// this context ended, either sees the claim or sees no pass.
		return false
	}
	if wait := c.held(key, now); wait > 0 {
		// Its handlers fight: a watch event does not cut the wait short.
		queue.AddAfter(key, wait)
		return true
	}
	p := c.handle(ctx, r, w, key, ticket)
	if p.stale {
		return true // not a pass: nothing ran, nothing to count or retry
	}
	err := p.err
	c.permanent.passed(key, err)
	if hold := c.loops.passed(key, p, now); hold > 0 {
		if err != nil && onlyPermanent(err) {
			c.permanent.failed(key, err, c.log)
		} else if err != nil && !routineOrPermanent(err) && !errors.Is(err, ErrIgnore) {
			c.log.WithField("key", key).WithField("retries", queue.NumRequeues(key)).
				Errorf("handler failed, retrying: %v", err)
		}
		queue.AddAfter(key, hold)
		return true
	}
	switch {
	case err == nil || errors.Is(err, ErrIgnore):
		queue.Forget(key)
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Cut short by the stop: not retried in this run (a retry could
		// run the handler again before the queue shuts down); the next
		// run re-queues every cached key.
		c.log.WithField("key", key).Debugf("stopping: %v", err)
	case onlyPermanent(err):
		// Retrying would fail the same way: the next event of the key
		// (a new version of the object, an Enqueue) runs it again.
		queue.Forget(key)
		c.permanent.failed(key, err, c.log)
	case routineOrPermanent(err):
		// Someone else changed the object first (the retry sees the new
		// version), or the handler asked for a quiet retry; any other
		// cause is permanent, and logged when it is alone. Routine, not
		// worth an error line.
		c.logRoutineRetry(key, queue.NumRequeues(key)+1, err)
		queue.AddRateLimited(key)
	default:
		c.log.WithField("key", key).WithField("retries", queue.NumRequeues(key)).
			Errorf("handler failed, retrying: %v", err)
		queue.AddRateLimited(key)
	}
	return true
}

// now is the time, read from the monotonic clock alone: time.Now reads the
// wall clock too, which doubles the cost of the reading every pass takes.
// Its wall-clock part is the epoch's plus the time elapsed since, which is
// all its readers (holds, and since when a pass runs) need.
func (c *controller) now() time.Time { return c.epoch.Add(time.Since(c.epoch)) }

// held returns how long a key whose handlers fight still has to wait. An
// object that is gone is not held: its handlers see the deletion at once.
func (c *controller) held(key string, now time.Time) time.Duration {
	wait := c.loops.held(key, now)
	if wait > 0 {
		if _, exists, err := c.informer.GetStore().GetByKey(key); err == nil && !exists {
			return 0
		}
	}
	return wait
}

func (c *controller) handle(ctx context.Context, r *run, w *worker, key string, ticket workqueue.Ticket) (p pass) {
	obj, exists, ok, err := c.read(r, key, ticket)
	if err != nil {
		return pass{err: err}
	}
	if !ok {
		// Not streamed yet (parked until the sync, never a deletion), or
		// gone and another pass queued to tell the handlers.
		return pass{stale: true}
	}
	if !exists {
		// Runs last: after ended, whatever way the pass ends.
		defer c.toldEnd(key, r.gen)
	}
	// Until a handler returns: a pass whose user code ends its goroutine
	// (runtime.Goexit) never assigns p again, and the deferred steps
	// below must then see it failed (see errExited).
	p.err = errExited
	var robj runtime.Object
	if exists {
		robj = obj.(runtime.Object)
		p.resourceVersion = resourceVersion(obj)
	}
	shared, isShared := c.handler.(*sharedHandler)
	if isShared && shared.own.stale(key, robj) {
		// The handlers wrote a newer version than this copy (or finalized
		// the object); the watch event of that write queues the key again.
		c.opts.Metrics.stalePassSkipped(c.gvk)
		return pass{stale: true}
	}
	if c.opts.Gate != nil {
		if handle, err := c.admit(ctx, r, w, key, ticket, robj); err != nil || !handle {
			return pass{err: err}
		}
	}
	if robj != nil {
		c.known.add(key, uidOf(robj), "")
	} else {
		defer func() {
			if p.err == nil || errors.Is(p.err, ErrIgnore) {
				c.ended(key, r.queue, ticket) // the handlers were told it is gone
			}
		}()
	}
	var done func()
	if err := recovered("PassTracker", func() error { done = c.tracking(key, robj); return nil }); err != nil {
		return pass{err: err}
	}
	if done != nil {
		defer func() { c.trackerDone(w, key, done, p.err) }()
	}
	if isShared {
		// Handlers of a shared controller are timed and recovered one by
		// one, so metrics and errors name the handler.
		p.writes, p.err = shared.run(key, robj, w.running)
		return p
	}
	if c.claimAs == "" {
		w.running(c.name) // else claim named it
	}
	p.err = callHandler(c.opts.Metrics, c.gvk, c.name, func() error { return c.handler.OnChange(key, robj) })
	return p
}

// callHandler runs fn, turning a panic into an error that names the handler
// and carries the stack, and records the handler's metrics. A handler
// that ends its goroutine (runtime.Goexit) is counted as failed with
// errExited: its pass fails too (see work), and the metrics must agree.
func callHandler(m *Metrics, gvk, name string, fn func() error) (err error) {
	var began time.Time
	if m != nil {
		began = time.Now() // only the metrics read it
	}
	panicked, returned := false, false
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			err = fmt.Errorf("handler %s panicked: %s\n%s", name, panicvalue.String(r), debug.Stack())
		} else if !returned {
			err = errExited // no recover sees a Goexit: the goroutine goes on ending
		}
		m.handlerDone(gvk, name, began, err, panicked)
	}()
	err = fn()
	returned = true
	return err
}

// trackerDone calls the done a PassTracker returned for key's pass, after
// the handlers, whose error is err. Its panic is logged with the key and
// the stack, and does not fail the pass: the handlers' work is done, and a
// retry would run them again for it (tell a deletion twice, or hide
// nothing when they returned ErrIgnore). Nor does its runtime.Goexit once
// the handlers succeeded: w.passOver, still set when the worker's
// goroutine ends, tells work not to retry the key.
func (c *controller) trackerDone(w *worker, key string, done func(), err error) {
	w.passOver = err == nil || errors.Is(err, ErrIgnore)
	if err := recovered("PassTracker's done", func() error { done(); return nil }); err != nil {
		c.log.WithField("key", key).Errorf("not retried, the handlers' pass is over: %v", err)
	}
	w.passOver = false
}

// recovered runs fn, user code the controller calls besides its handlers
// (a Gate, a PassTracker, a HeldDeletion), and turns a panic into its
// error, naming what panicked and carrying the stack, as callHandler does
// for a handler, rather than let the panic escape a worker's or the
// informer's goroutine and end the process. The caller decides what the
// panic means: a failed pass for a Gate or a Handling (retried with
// backoff), a logged line for what runs once the handlers are done.
func recovered(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %s\n%s", what, panicvalue.String(r), debug.Stack())
		}
	}()
	return fn()
}

// errExited is a pass's error while its user code runs, and stays its
// error when that code ends the worker's goroutine (runtime.Goexit, as
// t.FailNow does in a handler of a user's test): the pass's deferred
// steps then see it failed, so a deletion is not marked told.
var errExited = errors.New("handler ended its goroutine (runtime.Goexit) before returning")

// exited fails the pass of key whose user code called runtime.Goexit
// (no recover sees it: the worker's goroutine ends once the pass's
// deferred steps ran): it logs it and retries the key with backoff. The
// run starts a worker in its place (see work). A user's rate limiter is
// not asked (it may be the code that called Goexit): the backoff is the
// default limiter's.
func (c *controller) exited(key string, queue *workqueue.Queue[string]) {
	var retries int
	var wait time.Duration
	if l, ok := c.limiter.(*safeLimiter); ok {
		retries, wait = l.afterExit(key)
	} else {
		retries, wait = c.limiter.NumRequeues(key), c.limiter.When(key)
	}
	c.log.WithField("key", key).WithField("retries", retries).
		Errorf("handler failed, retrying: %v", errExited)
	queue.AddAfter(key, wait)
}
