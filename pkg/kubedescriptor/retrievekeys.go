package kubedescriptor

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// retrieveKeys is Retrieve limited to keys, for a scoped downstream resync
// (kvscheduler.Txn.WithResyncKeys): it reads (and, from a cache, copies)
// only those objects, so repairing a few objects costs in proportion to
// them, not to every object of the kind. It reports them as Retrieve
// would: an object without the management label, one the descriptor did
// not apply (see authored), or one outside Namespace, is not reported.
func (k *kind) retrieveKeys(ctx context.Context, keys []string, correlate []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
	desired := correlated(correlate)
	out := make([]kvscheduler.KVWithMetadata, 0, len(keys))
	for _, key := range keys {
		obj, err := k.get(ctx, key)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			out = append(out, k.report(ctx, key, obj, desired))
		}
	}
	return out, nil
}

// get reads the managed object at key, nil if there is none; like list,
// from the cache when there is one (which must have synced).
func (k *kind) get(ctx context.Context, key string) (runtime.Object, error) {
	ref, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	if k.opts.Cache != nil {
		store, err := k.syncedStore()
		if err != nil {
			return nil, err
		}
		storeKey := ref.Name
		if ref.Namespace != "" {
			storeKey = ref.Namespace + "/" + ref.Name
		}
		item, exists, err := store.GetByKey(storeKey)
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, nil
		}
		o, ok := item.(runtime.Object)
		if !ok {
			return nil, nil
		}
		obj = o
	} else {
		live, err := k.getLive(ctx, key)
		if err != nil || live == nil {
			return nil, err
		}
		o, ok := live.(runtime.Object)
		if !ok {
			return nil, nil
		}
		obj = o
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if !k.manages(m) {
		return nil, nil
	}
	if authored, err := k.authored(ctx, m); err != nil || !authored {
		return nil, err
	}
	if k.opts.Cache != nil {
		// The store's objects are shared with every reader of the cache
		// and must not be changed.
		obj = obj.DeepCopyObject()
	}
	return obj, nil
}
