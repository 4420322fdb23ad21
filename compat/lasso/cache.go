package lasso

import (
	"context"
	"fmt"
	"sync"

	lassocache "github.com/rancher/lasso/pkg/cache"
	lassoclient "github.com/rancher/lasso/pkg/client"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
)

// SharedCacheFactory is Lariat's cache factory seen through lasso's
// cache.SharedCacheFactory interface. It is safe for concurrent use.
type SharedCacheFactory struct {
	caches  *cache.SharedCacheFactory
	clients *SharedClientFactory

	mu      sync.Mutex
	syncErr error
}

var _ lassocache.SharedCacheFactory = (*SharedCacheFactory)(nil)

// NewSharedCacheFactory wraps caches; its SharedClientFactory wraps the
// client factory caches reads through.
func NewSharedCacheFactory(caches *cache.SharedCacheFactory) *SharedCacheFactory {
	return &SharedCacheFactory{caches: caches, clients: NewSharedClientFactory(caches.SharedClientFactory())}
}

// Lariat returns the wrapped factory.
func (f *SharedCacheFactory) Lariat() *cache.SharedCacheFactory { return f.caches }

// Start runs every informer not yet running until ctx ends.
func (f *SharedCacheFactory) Start(ctx context.Context) error { return f.caches.Start(ctx) }

// StartGVK creates the kind's informer if needed and starts it. Lariat
// starts informers factory-wide, so informers created but not yet started
// for other kinds start too; each runs once.
func (f *SharedCacheFactory) StartGVK(ctx context.Context, gvk schema.GroupVersionKind) error {
	if _, err := f.caches.ForKind(gvk); err != nil {
		return err
	}
	return f.caches.Start(ctx)
}

// ForObject returns the informer of obj's kind; a namespaced kind's has
// the namespace index.
func (f *SharedCacheFactory) ForObject(obj runtime.Object) (toolscache.SharedIndexInformer, error) {
	gvk, err := f.caches.SharedClientFactory().GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	return f.ForKind(gvk)
}

// ForKind returns the informer of a kind; a namespaced kind's has the
// namespace index.
func (f *SharedCacheFactory) ForKind(gvk schema.GroupVersionKind) (toolscache.SharedIndexInformer, error) {
	c, err := f.caches.SharedClientFactory().ForKind(gvk)
	if err != nil {
		return nil, err
	}
	informer, err := f.caches.ForKind(gvk)
	return namespaceIndexed(informer, err, c.Namespaced())
}

// ForResource returns the informer of a resource; a namespaced one's has
// the namespace index.
func (f *SharedCacheFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) (toolscache.SharedIndexInformer, error) {
	informer, err := f.caches.ForResource(gvr, namespaced)
	return namespaceIndexed(informer, err, namespaced)
}

// ForResourceKind returns the informer of a resource whose kind and scope
// the caller knows (an empty kind is looked up, as lasso does); a
// namespaced one's has the namespace index.
func (f *SharedCacheFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) (toolscache.SharedIndexInformer, error) {
	if kind == "" {
		return f.ForResource(gvr, namespaced)
	}
	informer, err := f.caches.ForResourceKind(gvr, kind, namespaced)
	return namespaceIndexed(informer, err, namespaced)
}

// namespaceIndexed adds client-go's namespace index (cache.NamespaceIndex)
// to a namespaced kind's informer unless it has it. lasso builds those
// informers with it (and a cluster-scoped kind's without), and wrangler
// code reads it by name (Cache().GetByIndex(cache.NamespaceIndex, ns));
// Lariat's lean informers have only the indexers asked for. client-go adds
// an index to a running informer by indexing what it holds.
func namespaceIndexed(informer toolscache.SharedIndexInformer, err error, namespaced bool) (toolscache.SharedIndexInformer, error) {
	if err != nil || !namespaced {
		return informer, err
	}
	has := func() bool {
		_, ok := informer.GetIndexer().GetIndexers()[toolscache.NamespaceIndex]
		return ok
	}
	if has() {
		return informer, nil
	}
	err = informer.AddIndexers(toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	if err != nil && !has() { // not added by a concurrent caller
		return nil, fmt.Errorf("namespace index: %w", err)
	}
	return informer, nil
}

// WaitForCacheSync waits for the started informers to sync, as Lariat's
// factory does (bounded by its SyncTimeout when ctx has no deadline), and
// reports each kind's state. lasso's signature has no error; the
// *cache.SyncError naming the kinds that did not sync and why is kept for
// SyncError.
func (f *SharedCacheFactory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionKind]bool {
	synced, err := f.caches.WaitForCacheSync(ctx)
	f.mu.Lock()
	f.syncErr = err
	f.mu.Unlock()
	return synced
}

// SyncError returns the error of the last WaitForCacheSync: nil when every
// started kind synced, else a *cache.SyncError naming each kind that did
// not, with its last list or watch error (a kind whose CRD is not
// installed says so).
func (f *SharedCacheFactory) SyncError() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncErr
}

// SharedClientFactory returns the client factory the informers use.
func (f *SharedCacheFactory) SharedClientFactory() lassoclient.SharedClientFactory { return f.clients }
