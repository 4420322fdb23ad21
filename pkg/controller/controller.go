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
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// Handler reacts to the current state of one object. obj is nil when the
// object no longer exists. A returned error re-queues the key with backoff,
// as does a panic (recovered, with the stack) or a call of runtime.Goexit
// (t.Fatal in a user's test): a new worker then replaces the one whose
// goroutine ended.
type Handler interface {
	// OnChange handles the object of key as the cache holds it, nil when
	// it no longer exists.
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
	// jitter, capped at 2 minutes. It only ever delays retries. A panic
	// of its methods is logged and the default limiter answers instead;
	// after a pass that ended its worker's goroutine (runtime.Goexit, in a
	// handler or in this limiter) the key's retry is timed by the default
	// limiter, and this one is not asked.
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
	// HeldDeletion, when set, tells from a deleted object's final labels
	// whether it was this replica's to see go: such a deletion, when the
	// handlers were not told of it by the time the controller stopped, is
	// one a CarriedDeletions hands to the replica's next factory. Nil
	// records none. It is called by the informer's goroutine: a panic of
	// it is logged with the key and the stack, and counts as held. It may
	// not call runtime.Goexit: that ends the informer's goroutine, and the
	// controller is told of no later event of the kind (logged at error
	// level, nothing more).
	HeldDeletion func(labels map[string]string) bool
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
	// epoch is when the controller was made; now counts from it.
	epoch time.Time
	loops *hotLoops
	// permanent remembers the permanent failures logged, to log each once.
	permanent permanentFailures
	grace     time.Duration
	// claimAs is the handler a pass is claimed under: the controller's own
	// when only it runs in a pass (no Gate, no PassTracker, not shared),
	// so that claim names it and the pass takes its worker's lock once
	// less (running); empty when the pass names its handlers as they
	// start.
	claimAs string
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
	c := &controller{name: name, informer: informer, handler: handler, epoch: time.Now()}
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
	c.limiter = workqueue.DefaultRateLimiter[string]()
	if c.opts.RateLimiter != nil {
		c.limiter = newSafeLimiter(c.opts.RateLimiter, c.log)
	}
	c.loops = newHotLoops(c.opts.RewriteLimit, c.limiter, c.log, c.opts.Metrics, c.gvk)
	c.grace = c.opts.StopGrace
	if c.grace <= 0 {
		c.grace = DefaultStopGrace
	}
	c.runs = map[*run]struct{}{}
	if _, shared := handler.(*sharedHandler); !shared && c.opts.Gate == nil && c.opts.Passes == nil {
		c.claimAs = name
	}
	reg, err := informer.AddEventHandler(c.eventHandler())
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", name, err)
	}
	c.reg = reg
	c.unrelisted = c.onRelisted()
	return c, nil
}

func (c *controller) Informer() cache.SharedIndexInformer { return c.informer }
