package generic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// FactoryOptions configure NewFactoryFromConfig. The zero value is a working
// default: every namespace, no resync, the client package's request timeout.
type FactoryOptions struct {
	// Client configures requests. Its Scheme must be nil or the scheme
	// given to NewFactoryFromConfig.
	Client client.SharedClientFactoryOptions
	// Cache configures informers (namespace, selectors, resync, sync
	// timeout). Its Logger defaults to Controller.Logger.
	Cache cache.SharedCacheFactoryOptions
	// Controller configures controllers (backoff, workers per kind,
	// metrics, logger).
	Controller controller.SharedControllerFactoryOptions
}

// Factory holds the one controller factory (and through it the one client
// and cache factory) that every API group's generated factory uses. An
// operator builds one Factory; each generated group factory embeds it and
// registers its group's types with AddToScheme when it is built, so kinds of
// all groups share one connection pool, one informer per kind and one
// controller per kind. It is safe for concurrent use.
type Factory struct {
	controllers *controller.SharedControllerFactory
	scheme      *runtime.Scheme

	mu sync.Mutex
	// sealed is set once the scheme may be read by clients and informers;
	// from then on the scheme must not change, since runtime.Scheme is not
	// safe for concurrent writes and reads.
	sealed bool
	// reserved holds the names parts of the operator reserved (see
	// Reserve): name -> who reserved it.
	reserved map[string]string
	// bound is the work started beside the controllers whose stop Run
	// and Wait wait for (see Bind).
	bound map[*boundWork]struct{}
}

// NewFactoryFromConfig returns a Factory for the cluster cfg points at. scheme
// decides which kinds are decoded into Go types; nil means a new scheme with
// client-go's built-in kinds. Generated group factories add their kinds to it
// with AddToScheme. NewFactoryFromConfig makes no request.
func NewFactoryFromConfig(cfg *rest.Config, scheme *runtime.Scheme, opts *FactoryOptions) (*Factory, error) {
	if cfg == nil {
		return nil, errors.New("generic factory: rest config is nil")
	}
	var o FactoryOptions
	if opts != nil {
		o = *opts
	}
	if o.Client.Scheme != nil && scheme != nil && o.Client.Scheme != scheme {
		return nil, errors.New("generic factory: opts.Client.Scheme differs from the scheme argument")
	}
	if scheme == nil {
		scheme = o.Client.Scheme
	}
	if scheme == nil {
		// A scheme of its own, not client-go's global one, which
		// AddToScheme would otherwise change for the whole process.
		scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			return nil, fmt.Errorf("generic factory: %w", err)
		}
	}
	o.Client.Scheme = scheme
	clients, err := client.NewSharedClientFactory(cfg, &o.Client)
	if err != nil {
		return nil, err
	}
	if o.Cache.Logger == nil {
		o.Cache.Logger = o.Controller.Logger
	}
	controllers, err := controller.NewSharedControllerFactory(cache.NewSharedCacheFactory(clients, &o.Cache), &o.Controller)
	if err != nil {
		return nil, err
	}
	return &Factory{controllers: controllers, scheme: scheme}, nil
}

// NewFactory returns a Factory over an existing controller factory, for
// operators that build the client, cache and controller factories
// themselves. That factory's scheme may already be in use, so AddToScheme
// accepts only kinds it already has: register every group's types before
// building the controller factory.
func NewFactory(controllers *controller.SharedControllerFactory) (*Factory, error) {
	if controllers == nil {
		return nil, errors.New("generic factory: controller factory is nil")
	}
	scheme := controllers.SharedCacheFactory().SharedClientFactory().Scheme()
	return &Factory{controllers: controllers, scheme: scheme, sealed: true}, nil
}

// Scheme returns the scheme that decides which kinds are typed.
func (f *Factory) Scheme() *runtime.Scheme { return f.scheme }

// AddToScheme registers types into the factory's scheme with the given
// functions (the AddToScheme of generated API packages). Generated group
// factories call it when they are built, before any controller exists.
// Once ControllerFactory, Start or Sync has been called it only accepts
// registrations that add nothing new, so building a group factory again
// stays harmless while a group added too late is an error instead of a race.
// A kind registered with a different Go type than the scheme has is an
// error too.
func (f *Factory) AddToScheme(addToScheme ...func(*runtime.Scheme) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Register into a scratch scheme first, to see what would change
	// without changing anything.
	scratch := runtime.NewScheme()
	if err := applySchemeFuncs(scratch, addToScheme); err != nil {
		return err
	}
	known := f.scheme.AllKnownTypes()
	var missing []string
	for gvk, t := range scratch.AllKnownTypes() {
		have, ok := known[gvk]
		switch {
		case !ok:
			missing = append(missing, gvk.String())
		case have != t:
			return fmt.Errorf("generic factory: %s is registered as %s, not %s", gvk, have, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if f.sealed {
		slices.Sort(missing)
		return fmt.Errorf("generic factory: kinds added after controllers were created (register every group before ControllerFactory, Start or Sync): %s",
			strings.Join(missing, ", "))
	}
	return applySchemeFuncs(f.scheme, addToScheme)
}

// applySchemeFuncs runs scheme registration functions, turning the panic
// runtime.Scheme raises on conflicting registrations into an error.
func applySchemeFuncs(s *runtime.Scheme, fns []func(*runtime.Scheme) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("generic factory: register types: %v", r)
		}
	}()
	for _, fn := range fns {
		if fn == nil {
			return errors.New("generic factory: register types: nil function")
		}
		if err := fn(s); err != nil {
			return fmt.Errorf("generic factory: register types: %w", err)
		}
	}
	return nil
}

func (f *Factory) seal() {
	f.mu.Lock()
	f.sealed = true
	f.mu.Unlock()
}

// ControllerFactory returns the controller factory every group shares, for
// NewController and friends. From the first call on, AddToScheme accepts no
// new kinds.
func (f *Factory) ControllerFactory() *controller.SharedControllerFactory {
	f.seal()
	return f.controllers
}

// Start starts the informers and controllers created so far, with workers
// workers per kind unless the options say otherwise, and waits for the
// informers to sync; see controller.SharedControllerFactory.Start. It may be
// called again for kinds created later, and, after ctx ended, with a new
// context to run everything again (a replica that regains leadership).
func (f *Factory) Start(ctx context.Context, workers int) error {
	f.seal()
	return f.controllers.Start(ctx, workers)
}

// Run starts the factory with ctx (see Start), blocks until ctx ends, and
// returns once everything it ran has stopped: every handler call returned
// and every informer stopped (see controller.SharedControllerFactory.Run),
// and every work bound to the factory (Bind: a dependents registration's
// event loop and scheduler) whose context had ended by then has stopped.
// It is the whole term function under leader election or sharding:
//
//	leader.Run(ctx, leases, ns, name, func(ctx context.Context) error {
//		return f.Run(ctx, 2)
//	})
//
// Handlers still running after the stop grace period
// (FactoryOptions.Controller.StopGrace, default 20 s) are logged, counted
// and named in the returned error (errors.Is(err,
// controller.ErrStillRunning)), on which leader and shard leave their Lease
// to expire instead of releasing it.
func (f *Factory) Run(ctx context.Context, workers int) error {
	f.seal()
	err := f.controllers.Run(ctx, workers)
	// Each bound work's wait is bounded by its own stop timeout, not by
	// ctx, which ended.
	return errors.Join(err, f.waitBound(context.WithoutCancel(ctx)))
}

// Wait blocks until every run begun by Start (or Sync) has stopped, for
// callers that Start the factory themselves (see
// controller.SharedControllerFactory.Wait), and the work bound to the
// factory (Bind) whose context has ended has stopped too.
func (f *Factory) Wait(ctx context.Context) error {
	err := f.controllers.Wait(ctx)
	if ctx.Err() != nil {
		return err
	}
	return errors.Join(err, f.waitBound(ctx))
}

// Sync starts the informers created so far, without their controllers, and
// waits for them to sync, so caches can be read before handlers run.
func (f *Factory) Sync(ctx context.Context) error {
	f.seal()
	caches := f.controllers.SharedCacheFactory()
	if err := caches.Start(ctx); err != nil {
		return err
	}
	_, err := caches.WaitForCacheSync(ctx)
	return err
}

// WaitForCacheSync waits for the started informers to sync and reports each
// kind's state; see cache.SharedCacheFactory.WaitForCacheSync.
func (f *Factory) WaitForCacheSync(ctx context.Context) (map[schema.GroupVersionKind]bool, error) {
	return f.controllers.SharedCacheFactory().WaitForCacheSync(ctx)
}
