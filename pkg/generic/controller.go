package generic

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	lcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// Controller is the typed controller of one kind: typed handlers, a typed
// cache and, through the embedded Client, typed API requests. It satisfies
// ControllerInterface. Every Controller of a kind made from one factory
// shares that kind's informer, queue and handlers.
type Controller[T RuntimeMetaObject, TList runtime.Object] struct {
	*Client[T, TList]
	controller controller.SharedController
	resource   schema.GroupResource
}

// NewController returns the typed controller of a kind whose resource and
// scope the caller knows, so no discovery is needed. It fails, without
// creating anything, when the factory would not decode the kind into T and
// TList (see NewClient): most often because the kind's types were not added
// to the factory's scheme. It fails, too, for a kind the cache factory holds
// the metadata of only (cache.Options.MetadataOnly); the kind's shared
// controller and informer exist by then, for others to use.
func NewController[T RuntimeMetaObject, TList runtime.Object](gvk schema.GroupVersionKind, resource string, namespaced bool, factory *controller.SharedControllerFactory) (*Controller[T, TList], error) {
	if factory == nil {
		return nil, fmt.Errorf("controller for %s: no controller factory", gvk)
	}
	c, err := NewClient[T, TList](gvk, resource, namespaced, factory.SharedCacheFactory().SharedClientFactory())
	if err != nil {
		return nil, err
	}
	shared, err := factory.ForResourceKind(gvk.GroupVersion().WithResource(resource), gvk.Kind, namespaced)
	if err != nil {
		return nil, err
	}
	if lcache.IsMetadataOnly(shared.Informer()) {
		// Its handlers would be given objects without spec or status.
		return nil, fmt.Errorf("controller for %s: the cache factory holds the kind's metadata only (MetadataOnly): a typed controller's handlers would not get whole objects; handle *metav1.PartialObjectMetadata through the cache factory's informer and read whole objects with GetFull", gvk)
	}
	if namespaced {
		ensureNamespaceIndex(shared.Informer())
	}
	return &Controller[T, TList]{
		Client:     c,
		controller: shared,
		resource:   schema.GroupResource{Group: gvk.Group, Resource: resource},
	}, nil
}

// ensureNamespaceIndex indexes the informer by namespace, so that listing one
// namespace of the cache does not scan every namespace's objects. It is best
// effort: Cache.List scans when the index is missing.
func ensureNamespaceIndex(informer cache.SharedIndexInformer) {
	if informer.GetIndexer().GetIndexers() == nil {
		return // client-go would panic adding to a nil map
	}
	// An error means another controller of the kind added the index first,
	// or the informer has stopped.
	_ = informer.AddIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// OnChange registers sync for every change to the kind's objects until ctx
// ends. sync is given nil when an object is deleted.
func (c *Controller[T, TList]) OnChange(ctx context.Context, name string, sync ObjectHandler[T]) {
	c.AddGenericHandler(ctx, name, FromObjectHandlerToHandler(sync))
}

// OnRemove registers sync for the deletion of the kind's objects until ctx
// ends, holding each object with a finalizer (see FinalizerName) until sync
// has succeeded for it. sync is given the object being deleted; it may be
// called more than once for one deletion and must be idempotent. Objects
// whose deletion began before they got the finalizer are not held and sync
// is not called for them.
func (c *Controller[T, TList]) OnRemove(ctx context.Context, name string, sync ObjectHandler[T]) {
	c.AddGenericRemoveHandler(ctx, name, FromObjectHandlerToHandler(sync))
}

// AddGenericHandler registers an untyped handler until ctx ends.
func (c *Controller[T, TList]) AddGenericHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc) {
	c.controller.RegisterHandler(ctx, name, handler)
}

// AddGenericRemoveHandler registers an untyped handler for deletions until
// ctx ends; it is OnRemove without the types. Requests it makes to manage
// the finalizer end with ctx.
func (c *Controller[T, TList]) AddGenericRemoveHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc) {
	c.controller.RegisterHandler(ctx, name, c.newRemoveHandler(ctx, name, handler))
}

func (c *Controller[T, TList]) newRemoveHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc) *removeHandler {
	return &removeHandler{
		ctx:       ctx,
		finalizer: FinalizerName(name),
		resource:  c.resource,
		handler:   handler,
		patch: func(ctx context.Context, namespace, name string, data []byte) (runtime.Object, error) {
			return c.Patch(ctx, namespace, name, jsonPatchType, data)
		},
	}
}

// Enqueue queues namespace/name for the kind's handlers.
func (c *Controller[T, TList]) Enqueue(namespace, name string) {
	c.controller.Enqueue(namespace, name)
}

// EnqueueAfter queues namespace/name for the kind's handlers after duration.
func (c *Controller[T, TList]) EnqueueAfter(namespace, name string, duration time.Duration) {
	c.controller.EnqueueAfter(namespace, name, duration)
}

// Informer returns the kind's shared informer.
func (c *Controller[T, TList]) Informer() cache.SharedIndexInformer {
	return c.controller.Informer()
}

// GroupVersionKind returns the controller's kind.
func (c *Controller[T, TList]) GroupVersionKind() schema.GroupVersionKind {
	return c.controller.GroupVersionKind()
}

// Cache returns the typed view of the kind's informer store; it does not
// answer before the informer has synced (see NewInformerCache).
func (c *Controller[T, TList]) Cache() CacheInterface[T] {
	return NewInformerCache[T](c.controller.Informer(), c.resource)
}

// Updater returns a function that updates objects of the kind, for code that
// handles objects untyped.
func (c *Controller[T, TList]) Updater() Updater {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		typed, ok := obj.(T)
		if !ok {
			var zero T
			return nil, fmt.Errorf("update %s: expected %T, got %T", c.resource, zero, obj)
		}
		updated, err := c.Update(ctx, typed)
		if err != nil {
			return nil, err
		}
		return updated, nil
	}
}
