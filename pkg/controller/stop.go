package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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
}

// activePass is a key being handled: by which run, since when, and which
// handler runs now. Runs after it that took the key from their queue wait
// for it: the key is queued again in theirs when the pass ends.
type activePass struct {
	run     *run
	since   time.Time
	handler string
	waiters []*run
}

// passes holds the keys being handled by any run of a controller, so that
// a run started while an earlier one still stops never runs a key that the
// earlier one is handling: per-key exclusion across runs, as the work queue
// gives it within one run.
type passes struct {
	mu     sync.Mutex
	active map[string]activePass
}

// claim marks key as handled by r, from now on, by handler (empty when the
// pass names its handlers as they start, see running). It returns false
// when an earlier run handles it: the key is then queued again in r's
// queue once that pass has ended.
func (p *passes) claim(key string, r *run, now time.Time, handler string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == nil {
		p.active = map[string]activePass{}
	}
	if a, ok := p.active[key]; ok {
		a.waiters = append(a.waiters, r)
		p.active[key] = a
		return false
	}
	p.active[key] = activePass{run: r, since: now, handler: handler}
	return true
}

// release ends key's pass and queues it again in the runs that waited for
// it (a queue shut down meanwhile drops it: its run re-queued every cached
// key for the next one when it stopped).
func (p *passes) release(key string) {
	p.mu.Lock()
	a := p.active[key]
	delete(p.active, key)
	p.mu.Unlock()
	for _, r := range a.waiters {
		r.queue.AddWithPriority(key, workqueue.High)
	}
}

// running records which handler of key's pass runs now.
func (p *passes) running(key, handler string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.active[key]; ok {
		a.handler = handler
		p.active[key] = a
	}
}

// of returns the passes of r still under way, by key.
func (p *passes) of(r *run, gvk string) []RunningHandler {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []RunningHandler
	for key, a := range p.active {
		if a.run == r {
			out = append(out, RunningHandler{GVK: gvk, Key: key, Handler: a.handler, Since: a.since})
		}
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
		for _, h := range c.passes.of(r, c.gvk) {
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
				still = append(still, c.passes.of(r, c.gvk)...)
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
