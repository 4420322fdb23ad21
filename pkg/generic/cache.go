package generic

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
)

// Cache is a typed, read-only view of an informer's store. It satisfies
// CacheInterface. Objects it returns are shared with every other reader
// (and with handlers) and must not be modified: DeepCopy them first.
//
// A cache of an informer (NewInformerCache, Controller.Cache) answers only
// once the informer has synced: before, Get, List and GetByIndex fail with
// a *lariatcache.NotSyncedError, never an empty list or a NotFound that
// would say "nothing exists" of a kind not listed yet. Likewise a cache
// limited to one namespace (cache.Options.Namespace) fails Get and List of
// another namespace with a *lariatcache.NotCoveredError. wrangler's caches
// return whatever the store holds. A cache filtered by label or field
// selector cannot tell a missing object from one outside its selector: its
// misses are NotFound, and mean only "not among the objects selected".
type Cache[T RuntimeMetaObject] struct {
	indexer  cache.Indexer
	informer cache.SharedIndexInformer // nil: read the indexer as it is
	resource schema.GroupResource
}

// NewCache returns the typed view of indexer, a store of objects of type T
// that the caller knows to be complete: reads return what it holds, at any
// time. resource names the kind in errors. For an informer's store use
// NewInformerCache, which does not answer before the informer has synced.
func NewCache[T RuntimeMetaObject](indexer cache.Indexer, resource schema.GroupResource) *Cache[T] {
	return &Cache[T]{indexer: indexer, resource: resource}
}

// NewInformerCache returns the typed view of informer's store. Until the
// informer has synced (and, for informers of a lariat cache factory, while
// it is not running), reads fail with a *lariatcache.NotSyncedError naming
// resource, so that a kind not listed yet is never read as empty; reads of
// a namespace a factory's informer does not list fail with a
// *lariatcache.NotCoveredError.
func NewInformerCache[T RuntimeMetaObject](informer cache.SharedIndexInformer, resource schema.GroupResource) *Cache[T] {
	return &Cache[T]{indexer: informer.GetIndexer(), informer: informer, resource: resource}
}

// known returns why an informer cache cannot answer about namespace ("" for
// all it holds): a *lariatcache.NotSyncedError while it has not synced, a
// *lariatcache.NotCoveredError for a namespace it does not list.
func (c *Cache[T]) known(namespace string) error {
	if c.informer == nil {
		return nil
	}
	if err := lariatcache.CheckNamespace(c.informer, c.resource, namespace); err != nil {
		return err
	}
	return lariatcache.CheckSynced(c.informer, c.resource)
}

// Get returns the cached object namespace/name (namespace is empty for
// cluster-scoped kinds). A miss is a NotFound API error, so callers handle
// it with apierrors.IsNotFound as they would a miss on the API server; a
// cache that has not synced returns a *lariatcache.NotSyncedError instead,
// and one limited to another namespace a *lariatcache.NotCoveredError.
func (c *Cache[T]) Get(namespace, name string) (T, error) {
	var zero T
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	if err := c.known(namespace); err != nil {
		return c.getStreamed(key, err)
	}
	obj, exists, err := c.indexer.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(c.resource, name)
	}
	return c.typed(obj)
}

// getStreamed answers a Get of key before the informer synced, when its
// first list streams (cache.Options.StreamInitialList) and the stream
// already handed the object out; otherwise, and for a miss (the object may
// not be listed yet), it returns notKnown, never NotFound.
func (c *Cache[T]) getStreamed(key string, notKnown error) (T, error) {
	var zero T
	r, ok := c.informer.(lariatcache.StreamReader)
	if !ok || !lariatcache.IsNotSynced(notKnown) || !r.StreamsInitialList() {
		return zero, notKnown
	}
	obj, exists, synced, err := r.GetStreamed(key)
	switch {
	case err != nil:
		return zero, err
	case exists:
		return c.typed(obj)
	case synced:
		// It synced meanwhile: the store can tell.
		return zero, apierrors.NewNotFound(c.resource, key[strings.LastIndex(key, "/")+1:])
	}
	return zero, notKnown
}

// List returns the cached objects of namespace ("" for all) whose labels
// selector matches; a nil selector matches all. A cache that has not
// synced returns a *lariatcache.NotSyncedError, never an empty list, and a
// cache limited to another namespace a *lariatcache.NotCoveredError
// (namespace "" lists what the cache holds).
func (c *Cache[T]) List(namespace string, selector labels.Selector) ([]T, error) {
	if err := c.known(namespace); err != nil {
		return nil, err
	}
	if selector == nil {
		selector = labels.Everything()
	}
	if s, ok := c.indexer.(lariatcache.SelectingIndexer); ok {
		// A compact cache decodes only the objects selected.
		items, err := s.ListSelected(namespace, selector)
		if err != nil {
			return nil, err
		}
		return c.typedAll(items)
	}
	var items []any
	if namespace != metav1.NamespaceAll {
		var err error
		// Asking is the only race-free way to know whether the index exists:
		// GetIndexers returns the map AddIndexers writes to.
		if items, err = c.indexer.ByIndex(cache.NamespaceIndex, namespace); err != nil {
			items = c.indexer.List() // no namespace index: scan
		}
	} else {
		items = c.indexer.List()
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		obj, err := c.typed(item)
		if err != nil {
			return nil, err
		}
		if namespace != metav1.NamespaceAll && obj.GetNamespace() != namespace {
			continue
		}
		if selector.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// AddIndexer adds a named index. It works before and after the informer
// starts: objects already cached are indexed at once. It fails when the name
// is taken, the informer has stopped, or the store was built outside
// pkg/cache without an Indexers map (client-go cannot add indexes to a nil
// one). Objects of another type than T (there are none in a store the
// controller built) are not indexed. It fails, too, for a T other than
// *metav1.PartialObjectMetadata over a metadata-only kind's informer.
func (c *Cache[T]) AddIndexer(indexName string, indexer Indexer[T]) error {
	if indexer == nil {
		return fmt.Errorf("index %q of %s: indexer is nil", indexName, c.resource)
	}
	if _, partial := any(*new(T)).(*metav1.PartialObjectMetadata); !partial && c.informer != nil && lariatcache.IsMetadataOnly(c.informer) {
		// Its objects are never T: the index would hold nothing, and
		// GetByIndex would answer "none" for keys the objects have.
		return fmt.Errorf("index %q of %s: the kind's cache is metadata-only (cache.Options.MetadataOnly) and holds no %T objects to index; index *metav1.PartialObjectMetadata instead", indexName, c.resource, *new(T))
	}
	if c.indexer.GetIndexers() == nil {
		// client-go keeps the Indexers map an informer was created with and
		// adds to it; with a nil map that would panic.
		return fmt.Errorf("index %q of %s: the informer was created without an Indexers map, so client-go cannot add indexes to it", indexName, c.resource)
	}
	err := c.indexer.AddIndexers(cache.Indexers{indexName: func(obj any) ([]string, error) {
		typed, ok := obj.(T)
		if !ok {
			return nil, nil
		}
		return indexer(typed)
	}})
	if err != nil {
		return fmt.Errorf("index %q of %s: %w", indexName, c.resource, err)
	}
	return nil
}

// GetByIndex returns the cached objects indexed under key in the named
// index. A cache that has not synced returns a *lariatcache.NotSyncedError.
func (c *Cache[T]) GetByIndex(indexName, key string) ([]T, error) {
	if err := c.known(""); err != nil {
		return nil, err
	}
	items, err := c.indexer.ByIndex(indexName, key)
	if err != nil {
		return nil, err
	}
	return c.typedAll(items)
}

func (c *Cache[T]) typedAll(items []any) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, item := range items {
		obj, err := c.typed(item)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func (c *Cache[T]) typed(obj any) (T, error) {
	typed, ok := obj.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("cache of %s holds a %T, not a %T", c.resource, obj, zero)
	}
	return typed, nil
}
