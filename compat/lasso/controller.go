package lasso

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	lassocache "github.com/rancher/lasso/pkg/cache"
	lassoclient "github.com/rancher/lasso/pkg/client"
	lassocontroller "github.com/rancher/lasso/pkg/controller"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// DefaultWorkers is the number of workers per kind when Start is given
// none (0), lasso's SharedControllerFactoryOptions.DefaultWorkers default.
const DefaultWorkers = 5

// SharedControllerFactory is Lariat's controller factory seen through
// lasso's controller.SharedControllerFactory interface: given to a wrangler
// v3 generated factory as FactoryOptions.SharedControllerFactory, it runs
// wrangler's controllers on Lariat's queues, caches and backoff. It is safe
// for concurrent use.
type SharedControllerFactory struct {
	controllers *controller.SharedControllerFactory
	caches      *SharedCacheFactory

	mu     sync.Mutex
	shared map[schema.GroupVersionKind]*SharedController
	// errs are the failures of ForResource and ForResourceKind, whose
	// lasso signatures have no error; Start returns them.
	errs []error
	// defaultWorkers is lasso's DefaultWorkers option, used when Start
	// is given no worker count; 0 means DefaultWorkers.
	defaultWorkers int
}

var _ lassocontroller.SharedControllerFactory = (*SharedControllerFactory)(nil)

// NewSharedControllerFactory wraps controllers, and its cache and client
// factories.
func NewSharedControllerFactory(controllers *controller.SharedControllerFactory) *SharedControllerFactory {
	return &SharedControllerFactory{
		controllers: controllers,
		caches:      NewSharedCacheFactory(controllers.SharedCacheFactory()),
		shared:      map[schema.GroupVersionKind]*SharedController{},
	}
}

// Lariat returns the wrapped factory, to use Lariat's API (the event loop
// bridge, sync errors, health) next to wrangler's.
func (f *SharedControllerFactory) Lariat() *controller.SharedControllerFactory { return f.controllers }

// ForObject returns the controller of obj's kind.
func (f *SharedControllerFactory) ForObject(obj runtime.Object) (lassocontroller.SharedController, error) {
	c, err := f.controllers.ForObject(obj)
	if err != nil {
		return nil, err
	}
	return f.wrap(c)
}

// ForKind returns the controller of a kind. It fails while the kind's
// resource cannot be looked up (its CRD is not installed), because lasso's
// controllers carry a client from the start.
func (f *SharedControllerFactory) ForKind(gvk schema.GroupVersionKind) (lassocontroller.SharedController, error) {
	c, err := f.controllers.ForKind(gvk)
	if err != nil {
		return nil, err
	}
	return f.wrap(c)
}

// ForResource returns the controller of a resource, looking up its kind.
// A failure (the resource is not served) is returned by Start; the
// controller returned meanwhile does nothing.
func (f *SharedControllerFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) lassocontroller.SharedController {
	return f.ForResourceKind(gvr, "", namespaced)
}

// ForResourceKind returns the controller of a resource whose kind and scope
// the caller knows (an empty kind is looked up). It needs no discovery, so
// a kind whose CRD is missing gets a controller that starts working when
// the CRD is installed; until then Start's *cache.SyncError names it. A
// failure is returned by Start; the controller returned meanwhile does
// nothing.
func (f *SharedControllerFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) lassocontroller.SharedController {
	var (
		c   controller.SharedController
		err error
	)
	if kind == "" {
		c, err = f.controllers.ForResource(gvr, namespaced)
	} else {
		c, err = f.controllers.ForResourceKind(gvr, kind, namespaced)
	}
	var sc lassocontroller.SharedController
	if err == nil {
		sc, err = f.wrap(c)
	}
	if err != nil {
		f.mu.Lock()
		// Kept as it is: Lariat's factories and wrap already name the
		// resource or kind ("controller for <gvr>: ...", "informer for
		// <kind>: ...", "lasso client for <gvr>: ..."); a prefix here
		// said it twice.
		f.errs = append(f.errs, err)
		f.mu.Unlock()
		// wrangler's generated controllers use the client before Start:
		// it fails every request with the error Start will return.
		return newErrorController(failingClient(gvr, kind, namespaced, err))
	}
	return sc
}

// wrap returns lasso's view of c; on failure the controller is nil, not
// a nil *SharedController in a non-nil interface.
func (f *SharedControllerFactory) wrap(c controller.SharedController) (lassocontroller.SharedController, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sc, ok := f.shared[c.GroupVersionKind()]; ok && sc.SharedController == c {
		return sc, nil
	}
	if err := f.caches.clients.checkTyped(c.GroupVersionKind()); err != nil {
		return nil, err
	}
	lariatClient, err := c.Client()
	if err != nil {
		return nil, err
	}
	lc, err := f.caches.clients.wrap(lariatClient, nil)
	if err != nil {
		return nil, err
	}
	// wrangler's Cache() reads the controller's informer, which lasso
	// builds with the namespace index for a namespaced kind.
	if _, err := namespaceIndexed(c.Informer(), nil, lariatClient.Namespaced()); err != nil {
		return nil, fmt.Errorf("informer for %s: %w", c.GroupVersionKind(), err)
	}
	sc := &SharedController{SharedController: c, client: lc}
	f.shared[c.GroupVersionKind()] = sc
	return sc, nil
}

// SharedCacheFactory returns the cache factory behind the controllers.
func (f *SharedControllerFactory) SharedCacheFactory() lassocache.SharedCacheFactory { return f.caches }

// Start starts the informers, waits for them to sync, and then starts the
// controllers, as lasso does: no handler runs before every started kind has
// synced, because wrangler's caches cannot say that a kind has not synced
// (a miss is NotFound, a list whatever the informer holds), so a handler
// reading another kind's cache early would be told that nothing exists.
// Unlike lasso's, Start does not block while a kind cannot sync (its CRD
// is missing, RBAC forbids listing): after the factory's SyncTimeout it
// returns the *cache.SyncError naming the kind, and the controllers start,
// in the background until ctx ends, once every kind has synced. (Lariat's
// own typed caches fail with a *cache.NotSyncedError instead, so Lariat's
// factory starts each kind's controller as soon as that kind has synced.)
//
// workers below 1 means lasso's DefaultWorkers option when the factory was
// built from lasso's options, else lasso's default, DefaultWorkers (5), as
// lasso's factory does for wrangler's Start(ctx, 0); Lariat's would run one.
func (f *SharedControllerFactory) Start(ctx context.Context, workers int) error {
	if workers < 1 {
		workers = f.defaultWorkers
	}
	if workers < 1 {
		workers = DefaultWorkers
	}
	f.mu.Lock()
	errs := append([]error(nil), f.errs...)
	f.mu.Unlock()
	caches := f.controllers.SharedCacheFactory()
	if err := caches.Start(ctx); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if _, err := caches.WaitForCacheSync(ctx); err != nil {
		if ctx.Err() == nil {
			go f.startWhenSynced(ctx, workers)
		}
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(append(errs, f.controllers.Start(ctx, workers))...)
}

// startWhenSynced starts the controllers once every started kind has
// synced, unless ctx ends first. The kinds still missing are logged by
// name by the cache factory (cache.SharedCacheFactoryOptions.UnhealthyAfter).
func (f *SharedControllerFactory) startWhenSynced(ctx context.Context, workers int) {
	caches := f.controllers.SharedCacheFactory()
	for {
		if _, err := caches.WaitForCacheSync(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
	}
	// Every kind has synced, so only a kind created meanwhile could fail
	// here, and it is named by the cache factory as well.
	_ = f.controllers.Start(ctx, workers)
}

// SharedController is one of Lariat's shared controllers seen through
// lasso's controller.SharedController interface. Enqueue, EnqueueAfter,
// EnqueueKey, Informer and Start are Lariat's.
type SharedController struct {
	controller.SharedController
	client *lassoclient.Client
}

var _ lassocontroller.SharedController = (*SharedController)(nil)

// RegisterHandler adds a named handler until ctx ends. lasso's ErrIgnore
// (wrangler's generic.ErrSkip) is Lariat's ErrIgnore: not retried, not
// reported.
func (s *SharedController) RegisterHandler(ctx context.Context, name string, handler lassocontroller.SharedControllerHandler) {
	s.SharedController.RegisterHandler(ctx, name, controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		out, err := handler.OnChange(key, obj)
		if err != nil && errors.Is(err, lassocontroller.ErrIgnore) {
			err = controller.ErrIgnore
		}
		return out, err
	}))
}

// Client returns lasso's client of the controller's kind, over Lariat's.
func (s *SharedController) Client() *lassoclient.Client { return s.client }

// errorController stands for a controller that could not be made, as
// lasso's does: it has an empty informer and drops keys; the factory's
// Start reports why.
type errorController struct {
	informer toolscache.SharedIndexInformer
	client   *lassoclient.Client
}

func newErrorController(client *lassoclient.Client) *errorController {
	return &errorController{informer: toolscache.NewSharedIndexInformer(nil, nil, 0, toolscache.Indexers{}), client: client}
}

func (*errorController) Enqueue(string, string)                     {}
func (*errorController) EnqueueAfter(string, string, time.Duration) {}
func (*errorController) EnqueueKey(string)                          {}
func (e *errorController) Informer() toolscache.SharedIndexInformer { return e.informer }
func (*errorController) Start(context.Context, int) error           { return nil }
func (*errorController) RegisterHandler(context.Context, string, lassocontroller.SharedControllerHandler) {
}
func (e *errorController) Client() *lassoclient.Client { return e.client }
