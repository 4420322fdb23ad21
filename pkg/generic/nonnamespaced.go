package generic

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// The types of cluster-scoped kinds wrap those of namespaced kinds and drop
// the namespace from their methods, as generated code for such kinds expects.

// NonNamespacedClient is a typed client of a cluster-scoped kind. It
// satisfies NonNamespacedClientInterface.
type NonNamespacedClient[T RuntimeMetaObject, TList runtime.Object] struct {
	*Client[T, TList]
}

// NewNonNamespacedClient returns the typed client of a cluster-scoped kind;
// see NewClient.
func NewNonNamespacedClient[T RuntimeMetaObject, TList runtime.Object](gvk schema.GroupVersionKind, resource string, clients *client.SharedClientFactory) (*NonNamespacedClient[T, TList], error) {
	c, err := NewClient[T, TList](gvk, resource, false, clients)
	if err != nil {
		return nil, err
	}
	return &NonNamespacedClient[T, TList]{Client: c}, nil
}

// Delete deletes the named object.
func (c *NonNamespacedClient[T, TList]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.Client.Delete(ctx, metav1.NamespaceNone, name, opts)
}

// Get reads the named object from the API server.
func (c *NonNamespacedClient[T, TList]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	return c.Client.Get(ctx, metav1.NamespaceNone, name, opts)
}

// List reads the objects from the API server.
func (c *NonNamespacedClient[T, TList]) List(ctx context.Context, opts metav1.ListOptions) (TList, error) {
	return c.Client.List(ctx, metav1.NamespaceNone, opts)
}

// Watch streams changes to the objects until ctx ends or the server closes
// the stream.
func (c *NonNamespacedClient[T, TList]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.Client.Watch(ctx, metav1.NamespaceNone, opts)
}

// Patch applies a patch of type pt to the named object, or to one of its
// subresources, and returns the result.
func (c *NonNamespacedClient[T, TList]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (T, error) {
	return c.Client.Patch(ctx, metav1.NamespaceNone, name, pt, data, subresources...)
}

// WithImpersonation returns a client of the same kind that acts as the given
// user.
func (c *NonNamespacedClient[T, TList]) WithImpersonation(impersonate rest.ImpersonationConfig) (NonNamespacedClientInterface[T, TList], error) {
	derived, err := c.Client.withImpersonation(impersonate)
	if err != nil {
		return nil, err
	}
	return &NonNamespacedClient[T, TList]{Client: derived}, nil
}

// NonNamespacedCache is the typed view of a cluster-scoped kind's informer
// store. It satisfies NonNamespacedCacheInterface.
type NonNamespacedCache[T RuntimeMetaObject] struct {
	*Cache[T]
}

// NewNonNamespacedCache returns the typed view of indexer, a complete store
// of cluster-scoped objects of type T; see NewCache.
func NewNonNamespacedCache[T RuntimeMetaObject](indexer cache.Indexer, resource schema.GroupResource) *NonNamespacedCache[T] {
	return &NonNamespacedCache[T]{Cache: NewCache[T](indexer, resource)}
}

// NewNonNamespacedInformerCache returns the typed view of informer's store
// of cluster-scoped objects of type T, which does not answer before the
// informer has synced; see NewInformerCache.
func NewNonNamespacedInformerCache[T RuntimeMetaObject](informer cache.SharedIndexInformer, resource schema.GroupResource) *NonNamespacedCache[T] {
	return &NonNamespacedCache[T]{Cache: NewInformerCache[T](informer, resource)}
}

// Get returns the named cached object, or a NotFound API error.
func (c *NonNamespacedCache[T]) Get(name string) (T, error) {
	return c.Cache.Get(metav1.NamespaceNone, name)
}

// List returns the cached objects whose labels selector matches; a nil
// selector matches all.
func (c *NonNamespacedCache[T]) List(selector labels.Selector) ([]T, error) {
	return c.Cache.List(metav1.NamespaceAll, selector)
}

// NonNamespacedController is the typed controller of a cluster-scoped kind.
// It satisfies NonNamespacedControllerInterface.
type NonNamespacedController[T RuntimeMetaObject, TList runtime.Object] struct {
	*Controller[T, TList]
}

// NewNonNamespacedController returns the typed controller of a
// cluster-scoped kind; see NewController.
func NewNonNamespacedController[T RuntimeMetaObject, TList runtime.Object](gvk schema.GroupVersionKind, resource string, factory *controller.SharedControllerFactory) (*NonNamespacedController[T, TList], error) {
	c, err := NewController[T, TList](gvk, resource, false, factory)
	if err != nil {
		return nil, err
	}
	return &NonNamespacedController[T, TList]{Controller: c}, nil
}

func (c *NonNamespacedController[T, TList]) clusterClient() *NonNamespacedClient[T, TList] {
	return &NonNamespacedClient[T, TList]{Client: c.Controller.Client}
}

// Enqueue queues name for the kind's handlers.
func (c *NonNamespacedController[T, TList]) Enqueue(name string) {
	c.Controller.Enqueue(metav1.NamespaceNone, name)
}

// EnqueueAfter queues name for the kind's handlers after duration.
func (c *NonNamespacedController[T, TList]) EnqueueAfter(name string, duration time.Duration) {
	c.Controller.EnqueueAfter(metav1.NamespaceNone, name, duration)
}

// Cache returns the typed view of the kind's informer store; it does not
// answer before the informer has synced (see NewInformerCache).
func (c *NonNamespacedController[T, TList]) Cache() NonNamespacedCacheInterface[T] {
	return NewNonNamespacedInformerCache[T](c.Informer(), c.resource)
}

// Delete deletes the named object.
func (c *NonNamespacedController[T, TList]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.clusterClient().Delete(ctx, name, opts)
}

// Get reads the named object from the API server.
func (c *NonNamespacedController[T, TList]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	return c.clusterClient().Get(ctx, name, opts)
}

// List reads the objects from the API server.
func (c *NonNamespacedController[T, TList]) List(ctx context.Context, opts metav1.ListOptions) (TList, error) {
	return c.clusterClient().List(ctx, opts)
}

// Watch streams changes to the objects until ctx ends or the server closes
// the stream.
func (c *NonNamespacedController[T, TList]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.clusterClient().Watch(ctx, opts)
}

// Patch applies a patch of type pt to the named object, or to one of its
// subresources, and returns the result.
func (c *NonNamespacedController[T, TList]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (T, error) {
	return c.clusterClient().Patch(ctx, name, pt, data, subresources...)
}

// WithImpersonation returns a client of the same kind that acts as the given
// user.
func (c *NonNamespacedController[T, TList]) WithImpersonation(impersonate rest.ImpersonationConfig) (NonNamespacedClientInterface[T, TList], error) {
	return c.clusterClient().WithImpersonation(impersonate)
}
