package cache

import "k8s.io/client-go/tools/cache"

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
