package cache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// SelectingIndexer is an indexer that lists by namespace and label
// selector itself. The indexers of a SharedCacheFactory's informers are
// SelectingIndexers: a compact informer's compares the labels it keeps
// beside each encoded object and decodes only the objects it returns, where
// listing and then filtering would decode every object. pkg/generic's typed
// caches list through it when their indexer has it.
type SelectingIndexer interface {
	cache.Indexer
	// ListSelected returns the objects of namespace ("" for all) whose
	// labels sel matches (nil matches all). It reads the namespace index
	// (cache.NamespaceIndex) when there is one, and scans the store when
	// there is none. Objects are shared with every other reader: callers
	// must not change them.
	ListSelected(namespace string, sel labels.Selector) ([]any, error)
}

// storeProxy is the store and indexer of whichever informer runs now. A
// compact informer's objects are decoded as they are read.
type storeProxy struct{ i *restartableInformer }

func (s *storeProxy) idx() cache.Indexer { return s.i.cur().GetIndexer() }

func (s *storeProxy) Add(obj any) error    { return s.idx().Add(obj) }
func (s *storeProxy) Update(obj any) error { return s.idx().Update(obj) }
func (s *storeProxy) Delete(obj any) error { return s.idx().Delete(obj) }
func (s *storeProxy) List() []any {
	items, err := decodedAll(s.idx().List(), nil)
	if err != nil {
		s.i.decodeFailed(err)
		return nil
	}
	return items
}
func (s *storeProxy) ListKeys() []string { return s.idx().ListKeys() }
func (s *storeProxy) Get(obj any) (any, bool, error) {
	return decodedItem(s.idx().Get(obj))
}
func (s *storeProxy) GetByKey(key string) (any, bool, error) {
	return decodedItem(s.idx().GetByKey(key))
}
func (s *storeProxy) Replace(list []any, rv string) error { return s.idx().Replace(list, rv) }
func (s *storeProxy) Resync() error                       { return s.idx().Resync() }
func (s *storeProxy) LastStoreSyncResourceVersion() string {
	return s.idx().LastStoreSyncResourceVersion()
}
func (s *storeProxy) Bookmark(rv string) { s.idx().Bookmark(rv) }
func (s *storeProxy) Index(indexName string, obj any) ([]any, error) {
	return decodedAll(s.idx().Index(indexName, obj))
}
func (s *storeProxy) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return s.idx().IndexKeys(indexName, indexedValue)
}
func (s *storeProxy) ListIndexFuncValues(indexName string) []string {
	return s.idx().ListIndexFuncValues(indexName)
}
func (s *storeProxy) ByIndex(indexName, indexedValue string) ([]any, error) {
	return decodedAll(s.idx().ByIndex(indexName, indexedValue))
}
func (s *storeProxy) GetIndexers() cache.Indexers { return s.idx().GetIndexers() }

// AddIndexers goes through the informer, which keeps indexers across runs.
func (s *storeProxy) AddIndexers(indexers cache.Indexers) error { return s.i.AddIndexers(indexers) }

// ListSelected decodes only the objects it returns: a compact informer's
// stored form carries each object's namespace and labels.
func (s *storeProxy) ListSelected(namespace string, sel labels.Selector) ([]any, error) {
	idx := s.idx()
	var items []any
	if namespace == "" {
		items = idx.List()
	} else {
		var err error
		// Asking is the only race-free way to know whether the index exists:
		// GetIndexers returns the map AddIndexers writes to.
		if items, err = idx.ByIndex(cache.NamespaceIndex, namespace); err != nil {
			items = idx.List()
		}
	}
	// The store's List and ByIndex return slices of their own.
	out := items[:0]
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, fmt.Errorf("cache: list %s: %w", namespace, err)
		}
		if namespace != "" && m.GetNamespace() != namespace {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		obj, err := decodedFor(item, false)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}
