package cache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// MetadataLister is a store that lists its objects' metadata without
// decoding them. The stores of a SharedCacheFactory's informers are
// MetadataListers: a compact informer's keeps each object's namespace,
// name, resourceVersion and labels beside the encoded object, so a reader
// that needs no more (counting objects per label value, collecting the
// values of a label) pays no decode per object, where List would decode
// every object of the kind.
type MetadataLister interface {
	// ListMetadata returns the metadata of every object in the store.
	// Only namespace, name, resourceVersion and labels are guaranteed to be
	// set; other fields may be empty (a compact cache does not keep them
	// beside the object). The values are shared with the cache: callers
	// must not change them.
	ListMetadata() ([]metav1.Object, error)
}

// ListMetadata returns the metadata of every object in store: read from the
// stored form when store is a MetadataLister (a SharedCacheFactory's
// informer, compact or not), from each object of List otherwise. See
// MetadataLister for which fields are set; callers must not change them.
// An error means the answer would be partial (the informer has not
// synced: a NotSyncedError; an object had no metadata): callers must not
// read it as "nothing else exists".
func ListMetadata(store cache.Store) ([]metav1.Object, error) {
	if l, ok := store.(MetadataLister); ok {
		return l.ListMetadata()
	}
	return metadataOf(store.List())
}

// ListMetadata reads each compact object's kept metadata instead of
// decoding it. Before the informer has synced it answers a NotSyncedError,
// as the factory's other reads do: its store then holds some of the kind's
// objects or none.
func (s *storeProxy) ListMetadata() ([]metav1.Object, error) {
	if !s.i.HasSynced() {
		var resource schema.GroupResource
		if s.i.resource != nil {
			resource = s.i.resource()
		}
		if err := CheckSynced(s.i, resource); err != nil {
			return nil, err
		}
	}
	return metadataOf(s.idx().List())
}

// metadataOf returns the metadata of stored items, compact or not.
func metadataOf(items []any) ([]metav1.Object, error) {
	out := make([]metav1.Object, 0, len(items))
	for _, item := range items {
		if o, ok := item.(*compactObject); ok {
			out = append(out, &o.compactMeta)
			continue
		}
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, fmt.Errorf("cache: metadata of a %T: %w", item, err)
		}
		out = append(out, m)
	}
	return out, nil
}
