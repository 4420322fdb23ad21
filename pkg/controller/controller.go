// Package controller runs handlers for the objects of a kind: a controller
// turns informer events into keys on a priority work queue and hands each key
// to its handler on a pool of workers, retrying failures with per-key
// exponential backoff. SharedController lets many named handlers share one
// queue per kind, and SharedControllerFactory ties clients, caches and
// controllers together.
//
// Keys caused by real changes (watch events, explicit enqueues) are served
// before keys from the initial list and periodic resyncs, and neither is ever
// delayed by a rate limiter: only retries back off, and keys whose handlers
// fight (keep rewriting the object, each write starting the next pass; see
// Options.RewriteLimit).
package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// Handler reacts to the current state of one object. obj is nil when the
// object no longer exists. A returned error re-queues the key with backoff.
type Handler interface {
	OnChange(key string, obj runtime.Object) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(key string, obj runtime.Object) error

// OnChange calls f.
func (f HandlerFunc) OnChange(key string, obj runtime.Object) error { return f(key, obj) }

// ErrIgnore, returned by a handler (or wrapped in its error), means "do not
// retry and do not report": the handler has decided the key needs no more
// work for now.
var ErrIgnore = errors.New("ignore handler error")

// Options configure a controller. The zero value is a working default.
type Options struct {
	// RateLimiter decides the delay before each retry of a failed key. Nil
	// means workqueue.DefaultRateLimiter: exponential per key from 5 ms with
	// jitter, capped at 2 minutes. It only ever delays retries.
	RateLimiter clientworkqueue.TypedRateLimiter[string]
	// SyncOnlyChangedObjects skips periodic resyncs: an update whose
	// resourceVersion did not change is not enqueued.
	SyncOnlyChangedObjects bool
	// Metrics records queue and handler metrics; nil records nothing.
	Metrics *Metrics
	// Logger receives handler errors; every line carries the kind and key.
	// Nil means logrus's standard logger.
	Logger logrus.FieldLogger
	// GVK labels metrics and log lines; it defaults to the controller name.
	GVK string
	// RewriteLimit is how many passes in a row may rewrite a key's object,
	// each begun from the resourceVersion the previous one wrote, before
	// the key's handlers are taken to fight: its passes are then held back
	// with RateLimiter like a failing key's, longer each time, the
	// handlers and the object are logged once, and
	// lariat_handler_fights_total counts the episode, until a pass writes
	// nothing. Writes are known from what shared handlers return (the
	// stored object after an update, as generated handlers do); a plain
	// Handler's are not seen. Zero means DefaultRewriteLimit; negative
	// turns the check off.
	RewriteLimit int
	// Gate, when set, runs before the handler on every pass and may skip
	// it; see Gate. Nil runs the handler on every pass.
	Gate Gate
	// StopGrace is how long a run's handlers may go on after its context
	// ended before Wait stops waiting for them: they are then logged by
	// kind, key and handler, counted in
	// lariat_handlers_outlived_stop_grace_total, and named in Wait's
	// *StillRunningError. Zero means DefaultStopGrace.
	StopGrace time.Duration
	// Passes, when set, is told of every pass of the handlers over an
	// object that exists (see PassTracker); Resource names the kind's
	// resource for it.
	Passes   PassTracker
	Resource func() (schema.GroupResource, error)
}

// Controller feeds one informer's keys to one handler.
type Controller interface {
	// Enqueue queues namespace/name (name alone for cluster-scoped objects).
	Enqueue(namespace, name string)
	// EnqueueAfter queues namespace/name after a delay.
	EnqueueAfter(namespace, name string, delay time.Duration)
	// EnqueueKey queues a key as the informer's store names it.
	EnqueueKey(key string)
	// Informer returns the informer the controller reads objects from.
	Informer() cache.SharedIndexInformer
	// Start runs workers until ctx ends. It returns at once: workers begin
	// when the informer has synced, and keys enqueued before then are kept.
	// The informer itself must be started by the caller (the factory does).
	// After ctx ends, Start may be called again with a new context; the
	// new run handles every cached key and every key cached when the last
	// run stopped, each only once the last run's handlers for it have
	// returned. A stopped controller's event handler leaves the informer
	// until then. Wait (see Waiter) waits for a run's handlers to return.
	Start(ctx context.Context, workers int) error
}

type controller struct {
	name     string
	gvk      string
	informer cache.SharedIndexInformer
	handler  Handler
	opts     Options
	log      logrus.FieldLogger
	// limiter is the queues' rate limiter, kept so that hot loops back
	// keys off with the same per-key history as failures.
	limiter clientworkqueue.TypedRateLimiter[string]
	loops   *hotLoops
	// permanent remembers the permanent failures logged, to log each once.
	permanent permanentFailures
	grace     time.Duration
	// passes are the keys being handled, by any run.
	passes passes
	// known are the keys whose end the handlers may not have seen.
	known knownKeys

	startLock sync.Mutex
	queue     *workqueue.Queue[string] // the running queue; nil while stopped
	runCtx    context.Context          // the context of queue's run
	ran       bool                     // Start has run workers before
	startKeys []startKey               // keys enqueued while stopped
	reg       cache.ResourceEventHandlerRegistration
	// unrelisted removes enqueueGone from the informer's OnRelisted hooks;
	// like reg, it goes when a run stops and comes back with the next.
	unrelisted func()
	runs       map[*run]struct{} // runs whose workers have not all returned
}

type startKey struct {
	key      string
	after    time.Duration
	priority workqueue.Priority
}

// New returns a controller that hands the keys of informer's objects to
// handler. It registers its event handler on the informer at once, so
// events that arrive before Start are kept.
func New(name string, informer cache.SharedIndexInformer, handler Handler, opts *Options) (Controller, error) {
	c := &controller{name: name, informer: informer, handler: handler}
	if opts != nil {
		c.opts = *opts
	}
	c.gvk = c.opts.GVK
	if c.gvk == "" {
		c.gvk = name
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = logrus.StandardLogger()
	}
	c.log = c.log.WithField("gvk", c.gvk)
	c.limiter = c.opts.RateLimiter
	if c.limiter == nil {
		c.limiter = workqueue.DefaultRateLimiter[string]()
	}
	c.loops = newHotLoops(c.opts.RewriteLimit, c.limiter, c.log, c.opts.Metrics, c.gvk)
	c.grace = c.opts.StopGrace
	if c.grace <= 0 {
		c.grace = DefaultStopGrace
	}
	c.runs = map[*run]struct{}{}
	reg, err := informer.AddEventHandler(c.eventHandler())
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", name, err)
	}
	c.reg = reg
	c.unrelisted = c.onRelisted()
	return c, nil
}

// keysOnly marks the controller's event handler as reading only keys and
// resourceVersions (lariatcache.KeyOnlyHandler): a compact cache need not
// decode objects for it, since the worker reads the object when it handles
// the key.
type keysOnly struct {
	cache.ResourceEventHandlerDetailedFuncs
}

func (keysOnly) ReadsOnlyKeys() {}

var _ lariatcache.KeyOnlyHandler = keysOnly{}

// eventHandler turns informer events into keys: adds of the initial list
// and periodic resyncs at low priority, real changes at high priority.
func (c *controller) eventHandler() cache.ResourceEventHandler {
	return keysOnly{cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if isInInitialList {
				c.enqueueObject(obj, workqueue.Low, true)
			} else {
				c.enqueueObject(obj, workqueue.High, true)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if resourceVersion(oldObj) != resourceVersion(newObj) {
				c.enqueueObject(newObj, workqueue.High, true)
			} else if !c.opts.SyncOnlyChangedObjects {
				c.enqueueObject(newObj, workqueue.Low, true) // a periodic resync
			}
		},
		DeleteFunc: func(obj any) { c.enqueueObject(obj, workqueue.High, false) },
	}}
}

func resourceVersion(obj any) string {
	if o, ok := obj.(interface{ GetResourceVersion() string }); ok {
		return o.GetResourceVersion()
	}
	return ""
}

func (c *controller) Informer() cache.SharedIndexInformer { return c.informer }

// enqueueObject queues an object's key, known from now on when the cache
// has the object (see knownKeys); DeletionHandlingMetaNamespaceKeyFunc unwraps
// DeletedFinalStateUnknown tombstones, so a deletion missed during a watch
// gap still reaches the handler (as nil).
func (c *controller) enqueueObject(obj any, p workqueue.Priority, cached bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		c.log.WithError(err).Errorf("cannot compute the key of a %T", obj)
		return
	}
	if cached {
		c.known.add(key)
	} else if !c.known.gone(key) {
		return // the handlers were told (see knownKeys.gone)
	}
	c.add(startKey{key: key, priority: p})
}

func (c *controller) Enqueue(namespace, name string) {
	c.EnqueueKey(joinKey(namespace, name))
}

func (c *controller) EnqueueAfter(namespace, name string, delay time.Duration) {
	c.add(startKey{key: joinKey(namespace, name), after: delay, priority: workqueue.High})
}

func (c *controller) EnqueueKey(key string) {
	c.add(startKey{key: key, priority: workqueue.High})
}

func joinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func (c *controller) add(k startKey) {
	c.startLock.Lock()
	q := c.queue
	if q != nil && c.runCtx.Err() != nil {
		q = nil // stopping: a shut-down queue would drop the key
	}
	if q == nil {
		c.startKeys = append(c.startKeys, k)
	}
	c.startLock.Unlock()
	if q != nil {
		addTo(q, k)
	}
}

func addTo(q *workqueue.Queue[string], k startKey) {
	if k.after > 0 {
		q.AddAfter(k.key, k.after)
	} else {
		q.AddWithPriority(k.key, k.priority)
	}
}

// processNext handles one key of r's queue; it returns false when the
// queue shut down. Once r's context ended, an error that is its
// cancellation (a request the handler made with the context it was
// registered with) is the stop, not a failure worth an error line.
func (c *controller) processNext(r *run) bool {
	ctx, queue := r.ctx, r.queue
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if ctx.Err() != nil {
		// The run is stopping: no handler starts after its context ended
		// (the next run re-queues every cached key, see stopped).
		return false
	}
	// One clock reading serves the pass: a hold counted from its start
	// ends no later than the AddAfter that follows the handlers.
	now := time.Now()
	if !c.passes.claim(key, r, now) {
		// An earlier run, stopping, still handles the key: this run
		// takes it once that pass has ended, never beside it.
		return true
	}
	defer c.passes.release(key)
	if wait := c.held(key, now); wait > 0 {
		// Its handlers fight: a watch event does not cut the wait short.
		queue.AddAfter(key, wait)
		return true
	}
	p := c.handle(ctx, key)
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
		c.log.WithField("key", key).Debugf("retrying: %v", err)
		queue.AddRateLimited(key)
	default:
		c.log.WithField("key", key).WithField("retries", queue.NumRequeues(key)).
			Errorf("handler failed, retrying: %v", err)
		queue.AddRateLimited(key)
	}
	return true
}

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

func (c *controller) handle(ctx context.Context, key string) pass {
	obj, exists, err := c.informer.GetStore().GetByKey(key)
	if err != nil {
		return pass{err: err}
	}
	var robj runtime.Object
	var p pass
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
		if handle, err := c.admit(ctx, key, robj); err != nil || !handle {
			return pass{err: err}
		}
	}
	if robj != nil {
		c.known.add(key)
	} else {
		defer func() {
			if p.err == nil || errors.Is(p.err, ErrIgnore) {
				c.ended(key) // the handlers were told it is gone
			}
		}()
	}
	if done := c.tracking(key, robj); done != nil {
		defer done()
	}
	if isShared {
		// Handlers of a shared controller are timed and recovered one by
		// one, so metrics and errors name the handler.
		p.writes, p.err = shared.run(key, robj, func(name string) { c.passes.running(key, name) })
		return p
	}
	c.passes.running(key, c.name)
	p.err = callHandler(c.opts.Metrics, c.gvk, c.name, func() error { return c.handler.OnChange(key, robj) })
	return p
}

// callHandler runs fn, turning a panic into an error that names the handler
// and carries the stack, and records the handler's metrics.
func callHandler(m *Metrics, gvk, name string, fn func() error) (err error) {
	began := time.Now()
	panicked := false
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			err = fmt.Errorf("handler %s panicked: %v\n%s", name, r, debug.Stack())
		}
		m.handlerDone(gvk, name, began, err, panicked)
	}()
	return fn()
}
