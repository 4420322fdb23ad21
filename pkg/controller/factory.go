package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// Backoff is the retry delay of a kind's failed keys: exponential per key
// from Base, with jitter, capped at Max.
type Backoff struct {
	Base, Max time.Duration
}

// Retry delays of kinds whose Backoff leaves them zero.
const (
	DefaultBackoffBase = 5 * time.Millisecond
	DefaultBackoffMax  = 2 * time.Minute
)

// SharedControllerFactoryOptions configure a SharedControllerFactory. The zero
// value is a working default.
type SharedControllerFactoryOptions struct {
	// Backoff applies to every kind; KindBackoff overrides it per kind.
	// Zero fields take DefaultBackoffBase and DefaultBackoffMax.
	Backoff     Backoff
	KindBackoff map[schema.GroupVersionKind]Backoff
	// RateLimiter, when set, gives the retry rate limiter of each kind's
	// queue in place of Backoff and KindBackoff, for callers that bring
	// their own (lasso's options carry client-go rate limiters). It is
	// called once per kind; it may return nil for a kind to keep the
	// kind's Backoff.
	RateLimiter func(gvk schema.GroupVersionKind) clientworkqueue.TypedRateLimiter[string]
	// KindWorkers sets the number of workers of a kind; others get the
	// count given to Start.
	KindWorkers map[schema.GroupVersionKind]int
	// SyncOnlyChangedObjects skips periodic resyncs for every kind.
	SyncOnlyChangedObjects bool
	// Registerer, when set, receives the controllers' Prometheus metrics.
	Registerer prometheus.Registerer
	// Logger receives handler errors and progress. Nil means logrus's
	// standard logger.
	Logger logrus.FieldLogger
	// RewriteLimit applies to every kind; see Options.RewriteLimit.
	RewriteLimit int
	// KindGates sets the Gate of a kind's controller, which runs before
	// its handlers on every pass and may skip them (package shard's
	// members gate their sharded kinds). Kinds without one run their
	// handlers on every pass.
	KindGates map[schema.GroupVersionKind]Gate
	// StopGrace bounds Wait and Run: how long a run's handlers may go on
	// after its context ended before they are logged, counted and named
	// in a *StillRunningError; see Options.StopGrace. Zero means
	// DefaultStopGrace.
	StopGrace time.Duration
	// Passes, when set, is told of every pass of every kind's handlers
	// over an object that exists; see PassTracker. package leader's
	// Elector.FactoryOptions and package shard's Member.FactoryOptions set
	// it, so that the writes of objects handled under leader election or
	// sharding are conditional.
	Passes PassTracker
	// CarriedDeletions, when set, hands over the deletions of the kinds
	// of KindHeldDeletion this factory's handlers were not told of by
	// the end of Wait, and seeds each kind's controller with what an
	// earlier factory handed over (see CarriedDeletions). package shard's
	// Join sets both, through Member.FactoryOptions, for its terms.
	CarriedDeletions *CarriedDeletions
	// KindHeldDeletion sets Options.HeldDeletion of a kind's controller.
	KindHeldDeletion map[schema.GroupVersionKind]func(labels map[string]string) bool
}

// SharedControllerFactory hands out one SharedController per kind and starts
// them with their informers. It is safe for concurrent use.
type SharedControllerFactory struct {
	caches  *cache.SharedCacheFactory
	opts    SharedControllerFactoryOptions
	metrics *Metrics
	log     logrus.FieldLogger

	mu          sync.Mutex
	controllers map[schema.GroupVersionKind]*sharedController
}

// NewSharedControllerFactoryFromConfig builds the client, cache and
// controller factories for a cluster. scheme lists the Go types to decode
// into (nil: the built-in kinds); kinds not in it are unstructured.
func NewSharedControllerFactoryFromConfig(cfg *rest.Config, scheme *runtime.Scheme, opts *SharedControllerFactoryOptions) (*SharedControllerFactory, error) {
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	var log logrus.FieldLogger
	if opts != nil {
		log = opts.Logger
	}
	return NewSharedControllerFactory(cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Logger: log}), opts)
}

// NewSharedControllerFactory returns a factory whose controllers read from
// caches' informers.
func NewSharedControllerFactory(caches *cache.SharedCacheFactory, opts *SharedControllerFactoryOptions) (*SharedControllerFactory, error) {
	f := &SharedControllerFactory{
		caches:      caches,
		controllers: map[schema.GroupVersionKind]*sharedController{},
	}
	if opts != nil {
		f.opts = *opts
	}
	f.log = f.opts.Logger
	if f.log == nil {
		f.log = logrus.StandardLogger()
	}
	if f.opts.Registerer != nil {
		m, err := NewMetrics(f.opts.Registerer, caches)
		if err != nil {
			return nil, fmt.Errorf("controller metrics: %w", err)
		}
		f.metrics = m
	}
	return f, nil
}

// SharedCacheFactory returns the cache factory behind the controllers.
func (f *SharedControllerFactory) SharedCacheFactory() *cache.SharedCacheFactory { return f.caches }

// ForObject returns the controller of obj's kind.
func (f *SharedControllerFactory) ForObject(obj runtime.Object) (SharedController, error) {
	gvk, err := f.caches.SharedClientFactory().GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	return f.ForKind(gvk)
}

// ForKind returns the controller of a kind, creating it (and its informer)
// if needed. It makes no request.
func (f *SharedControllerFactory) ForKind(gvk schema.GroupVersionKind) (SharedController, error) {
	clients := f.caches.SharedClientFactory()
	return f.forKind(gvk, func() (*client.Client, error) { return clients.ForKind(gvk) },
		func() (toolscache.SharedIndexInformer, error) { return f.caches.ForKind(gvk) })
}

// ForResource returns the controller of a resource, looking up its kind.
func (f *SharedControllerFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) (SharedController, error) {
	gvk, err := f.caches.SharedClientFactory().RESTMapper().KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("controller for %s: %w", gvr, err)
	}
	return f.ForResourceKind(gvr, gvk.Kind, namespaced)
}

// ForResourceKind returns the controller of a resource whose kind and scope
// the caller knows; it never needs discovery.
func (f *SharedControllerFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) (SharedController, error) {
	clients := f.caches.SharedClientFactory()
	return f.forKind(gvr.GroupVersion().WithKind(kind),
		func() (*client.Client, error) { return clients.ForResourceKind(gvr, kind, namespaced) },
		func() (toolscache.SharedIndexInformer, error) { return f.caches.ForResourceKind(gvr, kind, namespaced) })
}

func (f *SharedControllerFactory) forKind(gvk schema.GroupVersionKind, getClient func() (*client.Client, error), getInformer func() (toolscache.SharedIndexInformer, error)) (SharedController, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.controllers[gvk]; ok {
		return c, nil
	}
	informer, err := getInformer()
	if err != nil {
		return nil, err
	}
	label := KindLabel(gvk)
	handlers := &sharedHandler{gvk: label, metrics: f.metrics}
	c, err := New(label, informer, handlers, &Options{
		RateLimiter:            f.rateLimiter(gvk),
		SyncOnlyChangedObjects: f.opts.SyncOnlyChangedObjects,
		Metrics:                f.metrics,
		Logger:                 f.log,
		GVK:                    label,
		RewriteLimit:           f.opts.RewriteLimit,
		Gate:                   f.opts.KindGates[gvk],
		HeldDeletion:           f.opts.KindHeldDeletion[gvk],
		StopGrace:              f.opts.StopGrace,
		Passes:                 f.opts.Passes,
		Resource: func() (schema.GroupResource, error) {
			c, err := getClient()
			if err != nil {
				return schema.GroupResource{}, err
			}
			return c.GroupVersionResource().GroupResource(), nil
		},
	})
	if err != nil {
		return nil, err
	}
	sc := &sharedController{controller: c.(*controller), gvk: gvk, handlers: handlers, getClient: getClient}
	if keys := f.opts.CarriedDeletions.take(gvk); len(keys) > 0 {
		sc.controller.seedHeldDeletions(keys)
	}
	f.controllers[gvk] = sc
	return sc, nil
}

func (f *SharedControllerFactory) rateLimiter(gvk schema.GroupVersionKind) clientworkqueue.TypedRateLimiter[string] {
	if f.opts.RateLimiter != nil {
		if l := f.opts.RateLimiter(gvk); l != nil {
			return l
		}
	}
	b := f.opts.Backoff
	if kb, ok := f.opts.KindBackoff[gvk]; ok {
		b = kb
	}
	if b.Base <= 0 {
		b.Base = DefaultBackoffBase
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	return workqueue.NewItemExponentialJitterRateLimiter[string](b.Base, b.Max, 0.1)
}

// Start starts every informer and controller that is not running (those
// created since the last Start, and those whose last Start's context has
// ended), each controller with defaultWorkers workers unless KindWorkers
// says otherwise, then waits for the informers to sync. A kind that does not
// sync (its CRD is missing, RBAC forbids listing it) is reported in the
// returned *cache.SyncError but does not hold up the others, which are
// running when Start returns; it starts on its own once it syncs. Start may
// be called again for kinds asked for later.
//
// After ctx ends the factory can be started again with a new context (a
// replica that regains leadership): informers list again, handlers
// registered with a context that has not ended are kept, and every cached
// key, and every key cached when the last run stopped, is handled again,
// so that changes and deletions made while stopped reach the handlers.
func (f *SharedControllerFactory) Start(ctx context.Context, defaultWorkers int) error {
	if defaultWorkers < 1 {
		defaultWorkers = 1
	}
	if err := f.caches.Start(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	for gvk, c := range f.controllers {
		workers := defaultWorkers
		if w, ok := f.opts.KindWorkers[gvk]; ok && w > 0 {
			workers = w
		}
		if err := c.Start(ctx, workers); err != nil {
			f.mu.Unlock()
			return err
		}
	}
	f.mu.Unlock()
	_, err := f.caches.WaitForCacheSync(ctx)
	return err
}
