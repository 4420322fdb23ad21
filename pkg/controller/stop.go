package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// DefaultStopGrace is how long a run's handlers may go on after its context
// ended before they are reported as still running. It is below Kubernetes'
// default termination grace period (30 s), so that a replica stopped by a
// rolling upgrade names its stuck handlers before it is killed.
const DefaultStopGrace = 20 * time.Second

// ErrStillRunning is matched (errors.Is) by the error Wait and Run return
// when handlers were still running once the stop grace period had passed.
// A term function that returns it tells pkg/leader and pkg/shard not to
// give up their Lease: it is left to expire, so that no other replica
// takes the work over while those handlers may still act.
// It is cache.ErrStillRunning, which informers still delivering events
// match too.
var ErrStillRunning = cache.ErrStillRunning

// RunningHandler names a handler call that was still under way when the
// stop grace period of its run had passed.
type RunningHandler struct {
	// GVK is the kind as KindLabel names it (v1/ConfigMap).
	GVK string
	// Key is the object's namespace/name.
	Key string
	// Handler is the handler's name ("gate" for a controller's Gate).
	Handler string
	// Since is when the pass of the key began.
	Since time.Time
}

// String names the handler as log lines do.
func (h RunningHandler) String() string {
	return fmt.Sprintf("%s %s handler %s (since %s)", h.GVK, h.Key, h.Handler, h.Since.Format(time.RFC3339))
}

// StillRunningError is returned by Wait and Run when handlers outlived the
// stop grace period; it names each, and errors.Is(err, ErrStillRunning)
// holds.
type StillRunningError struct {
	// Grace is the stop grace period that passed.
	Grace time.Duration
	// Handlers are the calls still under way, by kind and key.
	Handlers []RunningHandler
}

// Error names every handler still running.
func (e *StillRunningError) Error() string {
	names := make([]string, len(e.Handlers))
	for i, h := range e.Handlers {
		names[i] = h.String()
	}
	return fmt.Sprintf("%d handler(s) still running %s after their run's context ended: %s", len(e.Handlers), e.Grace, strings.Join(names, "; "))
}

// Is makes errors.Is(err, ErrStillRunning) hold.
func (e *StillRunningError) Is(target error) bool { return target == ErrStillRunning }

// run is one Start of a controller: its context and queue, and when its
// workers returned.
type run struct {
	ctx   context.Context
	queue *workqueue.Queue[string]
	// gen is the run's generation of the known keys' records (see
	// knownKeys.newQueue): its passes mark them only while it is current.
	gen uint64
	// done is closed when every worker of the run has returned.
	done chan struct{}
	// graceOver is closed when the stop grace period after ctx's end
	// passed while workers still ran.
	graceOver chan struct{}
	// early is set when the run's workers start before its informer
	// synced (see earlyRun), else nil.
	early *earlyRun
	// workers are the run's workers, each with the pass it runs.
	workers []*worker
	// older holds the runs of the controller whose workers had not all
	// returned when this one started and still have not: a key one of
	// them handles is not handled by this run beside it (per-key
	// exclusion across runs, as the work queue gives it within one run).
	// An older run removes itself once its workers returned (see
	// dropOlder), so that an ended run, with its queue, is not kept by
	// the runs after it, nor its workers' locks taken by their claims.
	// Written under the controller's startLock, a new slice each time;
	// read by the claims without a lock.
	older atomic.Pointer[[]*run]
}

// olderRuns returns r's older runs still running (see run.older).
func (r *run) olderRuns() []*run {
	if p := r.older.Load(); p != nil {
		return *p
	}
	return nil
}

// dropOlder removes o from r's older runs: o's workers have all returned,
// so it holds no key any more. Called under the controller's startLock,
// which orders it with the other writers of r.older.
func (r *run) dropOlder(o *run) {
	runs := r.olderRuns()
	i := slices.Index(runs, o)
	if i < 0 {
		return
	}
	rest := slices.Delete(slices.Clone(runs), i, i+1)
	if len(rest) == 0 {
		r.older.Store(nil)
		return
	}
	r.older.Store(&rest)
}

// worker is one worker of a run and the pass it runs now, if any. Only its
// own worker writes it; the claims of later runs and the stop's
// diagnostics read it. Each worker has its own record (and lock) so that
// the workers of a run never share a lock for it: one lock for every
// pass of a controller was, with a million keys, a third of a pass's
// lock time, each taking it from the other's core.
type worker struct {
	mu sync.Mutex
	// active says whether key is being handled: by this worker, since
	// since, by handler (empty until the pass names it, see running).
	active  bool
	key     string
	since   time.Time
	handler string
	// last is the key of its last claim, kept after the pass: the key
	// of a pass whose user code ended the worker's goroutine (see work).
	last string
	// passOver is set while a PassTracker's done runs after handlers that
	// succeeded: if it ends the goroutine, the key is not retried (see
	// trackerDone). Only the worker's goroutine touches it.
	passOver bool
	// waiters are the later runs that took key from their queue while
	// this pass ran: the key is queued again in theirs when it ends.
	waiters []*run
	// A worker's record is written every pass: keep the next one's off
	// its cache line.
	_ [64]byte
}

// newWorkers returns the records of n workers.
func newWorkers(n int) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{}
	}
	return ws
}

// claim marks key as handled by w's run, from now on, by handler (empty
// when the pass names its handlers as they start, see running). It returns
// false when an earlier run of the controller still handles key: the key
// is then queued again in r's queue once that pass has ended. A run that
// calls it must check its context after it (see processNext): a run
// starts only once the earlier one's context ended, so a claim of the
// earlier run that a later run's check misses is one whose pass then sees
// its context ended and does not run.
func (w *worker) claim(r *run, key string, now time.Time, handler string) bool {
	w.mu.Lock()
	w.active, w.key, w.since, w.handler, w.last = true, key, now, handler, key
	w.mu.Unlock()
	for _, o := range r.olderRuns() {
		for _, ow := range o.workers {
			if ow.wait(key, r) {
				w.release()
				return false
			}
		}
	}
	return true
}

// wait adds r to the runs that wait for key's pass, if w runs it, and says
// whether it does.
func (w *worker) wait(key string, r *run) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.active || w.key != key {
		return false
	}
	w.waiters = append(w.waiters, r)
	return true
}

// dropWaiter removes r from the runs waiting for w's pass: r's workers
// returned, so it takes no key again, and the pass, which may be stuck
// for long, must not keep it reachable.
func (w *worker) dropWaiter(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := slices.Index(w.waiters, r); i >= 0 {
		w.waiters = slices.Delete(w.waiters, i, i+1)
	}
}

// release ends w's pass and queues its key again in the runs that waited
// for it (a queue shut down meanwhile drops it: its run re-queued every
// cached key for the next one when it stopped).
func (w *worker) release() {
	w.mu.Lock()
	key, waiters := w.key, w.waiters
	w.active, w.key, w.handler, w.waiters = false, "", "", nil
	w.mu.Unlock()
	for _, r := range waiters {
		r.queue.AddWithPriority(key, workqueue.High)
	}
}

// running records which handler of w's pass runs now.
func (w *worker) running(handler string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handler = handler
}

// passesOf returns the passes of r still under way, by key.
func passesOf(r *run, gvk string) []RunningHandler {
	var out []RunningHandler
	for _, w := range r.workers {
		w.mu.Lock()
		if w.active {
			out = append(out, RunningHandler{GVK: gvk, Key: w.key, Handler: w.handler, Since: w.since})
		}
		w.mu.Unlock()
	}
	sortRunning(out)
	return out
}

func sortRunning(hs []RunningHandler) {
	slices.SortFunc(hs, func(a, b RunningHandler) int {
		if c := strings.Compare(a.GVK, b.GVK); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// graceTimer starts the stop grace period of r, whose context has ended:
// once it passes with passes of r under way, each is logged by kind, key
// and handler, and counted, and r.graceOver is closed. The returned
// function stops the timer (the workers returned in time).
func (c *controller) graceTimer(r *run) (stop func()) {
	t := time.AfterFunc(c.grace, func() {
		for _, h := range passesOf(r, c.gvk) {
			c.log.WithField("key", h.Key).WithField("handler", h.Handler).
				Warnf("handler still running %s after its run's context ended (since %s): the stop waits no longer", c.grace, h.Since.Format(time.RFC3339))
			c.opts.Metrics.outlivedGrace(c.gvk, h.Handler)
		}
		close(r.graceOver)
	})
	return func() { t.Stop() }
}

// wait blocks until every run begun so far has ended (its context ended
// and every worker returned), or its grace period passed, or ctx ended. It
// returns the handlers still running in runs whose grace passed.
func (c *controller) wait(ctx context.Context) ([]RunningHandler, error) {
	c.startLock.Lock()
	runs := make([]*run, 0, len(c.runs))
	for r := range c.runs {
		runs = append(runs, r)
	}
	c.startLock.Unlock()
	var still []RunningHandler
	for _, r := range runs {
		select {
		case <-r.done:
		case <-r.graceOver:
			select {
			case <-r.done:
			default:
				still = append(still, passesOf(r, c.gvk)...)
			}
		case <-ctx.Done():
			return still, ctx.Err()
		}
	}
	return still, nil
}

// Waiter is a controller that can wait for its runs to end. The controllers
// New and SharedControllerFactory return implement it.
type Waiter interface {
	// Wait blocks until every run begun by Start has ended: its context
	// ended and every handler call of it returned. Handlers still running
	// once the stop grace period (Options.StopGrace) after their run's end
	// has passed are logged and counted, and Wait returns a
	// *StillRunningError naming them. It returns ctx's error if ctx ends
	// first. While a run's context is live, Wait waits for it to end.
	Wait(ctx context.Context) error
}

// Wait implements Waiter.
func (c *controller) Wait(ctx context.Context) error {
	still, err := c.wait(ctx)
	if err != nil {
		return err
	}
	if len(still) > 0 {
		return &StillRunningError{Grace: c.grace, Handlers: still}
	}
	return nil
}
