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

	"github.com/lariat-dev/lariat/pkg/controller"
)

// The interfaces below are what generated <Kind>Controller, <Kind>Client and
// <Kind>Cache interfaces embed, so that operators can depend on (and mock)
// one kind's API without this package's concrete types.

// ControllerMeta is the untyped part of a controller, the same for every
// kind.
type ControllerMeta interface {
	// Informer returns the kind's shared informer.
	Informer() cache.SharedIndexInformer
	// GroupVersionKind returns the controller's kind.
	GroupVersionKind() schema.GroupVersionKind
	// AddGenericHandler registers an untyped handler until ctx ends.
	AddGenericHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc)
	// AddGenericRemoveHandler registers an untyped handler for deletions,
	// kept from being missed by a finalizer, until ctx ends.
	AddGenericRemoveHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc)
	// Updater returns a function that updates objects of the kind.
	Updater() Updater
}

// ControllerInterface is a typed controller of a namespaced kind.
type ControllerInterface[T RuntimeMetaObject, TList runtime.Object] interface {
	ControllerMeta
	ClientInterface[T, TList]
	// OnChange registers a handler for every change until ctx ends.
	OnChange(ctx context.Context, name string, sync ObjectHandler[T])
	// OnRemove registers a handler for deletions until ctx ends.
	OnRemove(ctx context.Context, name string, sync ObjectHandler[T])
	// Enqueue queues an object's key for the handlers.
	Enqueue(namespace, name string)
	// EnqueueAfter queues an object's key after a delay.
	EnqueueAfter(namespace, name string, duration time.Duration)
	// Cache returns the typed view of the informer's store.
	Cache() CacheInterface[T]
}

// NonNamespacedControllerInterface is a typed controller of a cluster-scoped
// kind.
type NonNamespacedControllerInterface[T RuntimeMetaObject, TList runtime.Object] interface {
	ControllerMeta
	NonNamespacedClientInterface[T, TList]
	// OnChange registers a handler for every change until ctx ends.
	OnChange(ctx context.Context, name string, sync ObjectHandler[T])
	// OnRemove registers a handler for deletions until ctx ends.
	OnRemove(ctx context.Context, name string, sync ObjectHandler[T])
	// Enqueue queues an object's key for the handlers.
	Enqueue(name string)
	// EnqueueAfter queues an object's key after a delay.
	EnqueueAfter(name string, duration time.Duration)
	// Cache returns the typed view of the informer's store.
	Cache() NonNamespacedCacheInterface[T]
}

// ClientInterface is a typed client of a namespaced kind.
type ClientInterface[T RuntimeMetaObject, TList runtime.Object] interface {
	// Create creates obj in its namespace.
	Create(ctx context.Context, obj T) (T, error)
	// Update replaces obj, guarded by its resourceVersion.
	Update(ctx context.Context, obj T) (T, error)
	// UpdateStatus replaces obj's status subresource.
	UpdateStatus(ctx context.Context, obj T) (T, error)
	// Delete deletes an object.
	Delete(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	// Get reads an object from the API server.
	Get(ctx context.Context, namespace, name string, opts metav1.GetOptions) (T, error)
	// List reads the objects of a namespace ("" for all).
	List(ctx context.Context, namespace string, opts metav1.ListOptions) (TList, error)
	// Watch streams changes to the objects of a namespace ("" for all).
	Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	// Patch patches an object or one of its subresources.
	Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, subresources ...string) (T, error)
	// Apply applies a configuration with server-side apply.
	Apply(ctx context.Context, config ApplyConfiguration, opts metav1.ApplyOptions) (T, error)
	// WithImpersonation returns a client that acts as another user.
	WithImpersonation(impersonate rest.ImpersonationConfig) (ClientInterface[T, TList], error)
}

// NonNamespacedClientInterface is a typed client of a cluster-scoped kind.
type NonNamespacedClientInterface[T RuntimeMetaObject, TList runtime.Object] interface {
	// Create creates obj.
	Create(ctx context.Context, obj T) (T, error)
	// Update replaces obj, guarded by its resourceVersion.
	Update(ctx context.Context, obj T) (T, error)
	// UpdateStatus replaces obj's status subresource.
	UpdateStatus(ctx context.Context, obj T) (T, error)
	// Delete deletes an object.
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	// Get reads an object from the API server.
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	// List reads the objects.
	List(ctx context.Context, opts metav1.ListOptions) (TList, error)
	// Watch streams changes to the objects.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// Patch patches an object or one of its subresources.
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (T, error)
	// Apply applies a configuration with server-side apply.
	Apply(ctx context.Context, config ApplyConfiguration, opts metav1.ApplyOptions) (T, error)
	// WithImpersonation returns a client that acts as another user.
	WithImpersonation(impersonate rest.ImpersonationConfig) (NonNamespacedClientInterface[T, TList], error)
}

// CacheInterface is a typed, read-only view of a namespaced kind's informer
// store. Objects it returns are shared with every other reader and must not
// be modified.
type CacheInterface[T runtime.Object] interface {
	// Get returns a cached object or a NotFound API error.
	Get(namespace, name string) (T, error)
	// List returns the cached objects of a namespace ("" for all) that
	// selector matches (nil matches all).
	List(namespace string, selector labels.Selector) ([]T, error)
	// AddIndexer adds a named index, before or after the informer starts.
	AddIndexer(indexName string, indexer Indexer[T]) error
	// GetByIndex returns the cached objects indexed under key.
	GetByIndex(indexName, key string) ([]T, error)
}

// NonNamespacedCacheInterface is a typed, read-only view of a cluster-scoped
// kind's informer store.
type NonNamespacedCacheInterface[T runtime.Object] interface {
	// Get returns a cached object or a NotFound API error.
	Get(name string) (T, error)
	// List returns the cached objects that selector matches (nil matches
	// all).
	List(selector labels.Selector) ([]T, error)
	// AddIndexer adds a named index, before or after the informer starts.
	AddIndexer(indexName string, indexer Indexer[T]) error
	// GetByIndex returns the cached objects indexed under key.
	GetByIndex(indexName, key string) ([]T, error)
}
