package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

func (c *controller) Start(ctx context.Context, workers int) error {
	if workers < 1 {
		return fmt.Errorf("controller %s: workers must be at least 1, got %d", c.name, workers)
	}
	c.startLock.Lock()
	defer c.startLock.Unlock()
	if c.queue != nil && c.runCtx.Err() == nil {
		return nil
	}
	if c.reg == nil {
		// Removed when the last run stopped.
		reg, err := c.informer.AddEventHandler(c.eventHandler())
		if err != nil {
			return fmt.Errorf("controller %s: %w", c.name, err)
		}
		c.reg = reg
		c.unrelisted = c.onRelisted()
	}
	if old := c.queue; old != nil {
		old.ShutDown() // its run is ending; its keys are in the store
	}
	queue := workqueue.New(workqueue.Options[string]{
		RateLimiter: c.limiter,
		Metrics:     c.opts.Metrics.queueMetrics(c.gvk),
	})
	for _, k := range c.startKeys {
		addTo(queue, k)
	}
	c.startKeys = nil
	gen := c.known.newQueue()
	restart := c.ran
	c.queue, c.runCtx, c.ran = queue, ctx, true
	r := &run{ctx: ctx, queue: queue, gen: gen, done: make(chan struct{}), graceOver: make(chan struct{}), workers: newWorkers(workers)}
	if len(c.runs) > 0 {
		older := make([]*run, 0, len(c.runs))
		for o := range c.runs {
			older = append(older, o)
		}
		r.older.Store(&older)
	}
	if reader := c.streamReader(); reader != nil && !restart {
		// Its first list streams: workers start on the objects streamed
		// so far (a restart's first reads the store's keys, after sync).
		r.early = &earlyRun{reader: reader}
	}
	c.runs[r] = struct{}{}
	go c.run(r, workers, restart)
	return nil
}

// run serves its queue with workers until its context ends, and returns
// once they all have. A restart first queues every cached key, since keys
// queued when the last run stopped were dropped with its queue.
func (c *controller) run(r *run, workers int, restart bool) {
	ctx, queue := r.ctx, r.queue
	defer func() {
		c.startLock.Lock()
		delete(c.runs, r)
		// Its workers returned: it holds no key, and the runs after it
		// let go of it (and it of the ones before it, and the waiters of
		// their passes of it), so that no chain of ended runs stays
		// reachable from the live one.
		for _, o := range r.olderRuns() {
			for _, w := range o.workers {
				w.dropWaiter(r)
			}
		}
		r.older.Store(nil)
		for n := range c.runs {
			n.dropOlder(r)
		}
		c.startLock.Unlock()
		close(r.done)
	}()
	defer c.stopped(queue)
	var wg sync.WaitGroup
	startWorkers := func() {
		for _, w := range r.workers {
			wg.Go(func() { c.work(r, w, &wg) })
		}
	}
	if r.early != nil {
		startWorkers()
	}
	// Keys are looked up in the informer's store, so workers wait for it to
	// be filled (those of an early run park the keys they cannot read
	// yet); a kind that never syncs holds only its own workers, never
	// another kind's. A short poll: sync is a one-time wait and every
	// millisecond of it delays the first handler call of a cold start.
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.informer.HasSynced(), nil
	})
	switch {
	case err != nil && r.early == nil:
		return
	case err != nil:
		// Stopped before the sync: the early workers stop as any do.
	case r.early != nil:
		r.early.syncedEarly(queue)
	case restart:
		for _, key := range c.informer.GetStore().ListKeys() {
			queue.AddWithPriority(key, workqueue.Low)
		}
		// Deletions the last run's queue or the old informer dropped.
		c.startLock.Lock()
		reg := c.reg
		c.startLock.Unlock()
		if reg != nil {
			c.enqueueGone(ctx, reg)
		}
	}
	if r.early == nil {
		startWorkers()
	}
	<-ctx.Done()
	queue.ShutDown()
	stopGrace := c.graceTimer(r)
	defer stopGrace()
	wg.Wait()
}

// work runs w's passes until r's queue shuts down. A pass whose user code
// ended the goroutine (runtime.Goexit) skips the loop's end: its key is
// retried (see exited; not when the handlers had succeeded and only a
// PassTracker's done ended it, see trackerDone), and a new goroutine,
// counted in wg, takes w's place, so that the run keeps its workers.
// Checked here, once per worker, rather than by a defer in every pass.
func (c *controller) work(r *run, w *worker, wg *sync.WaitGroup) {
	ended := false
	defer func() {
		if !ended {
			if w.passOver {
				w.passOver = false
				c.log.WithField("key", w.last).
					Errorf("not retried, the handlers' pass is over: the PassTracker's done ended its goroutine (runtime.Goexit)")
			} else {
				c.exited(w.last, r.queue)
			}
			wg.Go(func() { c.work(r, w, wg) })
		}
	}()
	for c.processNext(r, w) {
	}
	ended = true
}

// stopped ends a run: unless a new run has begun, the controller's event
// handler leaves the informer (which may outlive the controller), and every
// cached key is kept for the next run, so that an object deleted before it
// is handled as gone.
func (c *controller) stopped(queue *workqueue.Queue[string]) {
	queue.ShutDown()
	c.startLock.Lock()
	if c.queue != queue {
		c.startLock.Unlock()
		return
	}
	c.queue = nil
	reg, unrelisted := c.reg, c.unrelisted
	c.reg, c.unrelisted = nil, nil
	c.startLock.Unlock()
	if unrelisted != nil {
		// The next run compares the store with the known keys itself.
		unrelisted()
	}
	for _, key := range c.informer.GetStore().ListKeys() {
		c.add(startKey{key: key, priority: workqueue.Low})
	}
	if reg != nil {
		if err := c.informer.RemoveEventHandler(reg); err != nil {
			c.log.WithError(err).Warn("cannot remove the stopped controller's event handler")
		}
	}
}
