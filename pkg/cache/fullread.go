package cache

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// DefaultFullObjects is how many whole objects GetFull keeps per
// MetadataOnly kind.
const DefaultFullObjects = 256

// GetFull returns the whole object namespace/name of a kind the factory
// has an informer for. For a MetadataOnly kind it is read from the API
// server, unless the object read last for the same UID has the
// resourceVersion the cache's metadata has now: the kind's most recently
// read objects (DefaultFullObjects) are kept, so a handler reading the
// object it was handed again costs a map lookup. What it returns is never
// older than the cache's metadata; it may be newer, and if the object was
// deleted and created again since, its UID tells. For any other kind it is
// the cache's object. Objects are stripped as the kind's cache strips
// them (managedFields; the last-applied annotation with StripLastApplied).
//
// The cache's answer comes first: before the informer has synced, a
// NotSyncedError; for a namespace the cache does not cover, a
// NotCoveredError; an object the cache does not hold, a NotFound error
// naming the resource as the API server's does. Callers must not change
// what it returns.
func (f *SharedCacheFactory) GetFull(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (runtime.Object, error) {
	f.mu.Lock()
	k, ok := f.kinds[gvk]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("cache: no informer for %s: create it (ForKind) and start it first", KindLabel(gvk))
	}
	if err := k.check(gvk, namespace); err != nil {
		return nil, err
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	cached, exists, err := k.informer.GetStore().GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(k.resource(gvk), name)
	}
	if k.full == nil {
		return cached.(runtime.Object), nil
	}
	m, err := meta.Accessor(cached)
	if err != nil {
		return nil, fmt.Errorf("cache: metadata of %s %s: %w", KindLabel(gvk), key, err)
	}
	return k.full.get(ctx, namespace, name, m)
}

// check returns CheckSynced's and CheckNamespace's errors. The resource
// is looked up for an error only: GetFull of a kept object costs a map
// lookup, not a RESTMapper's.
func (k *kindInformer) check(gvk schema.GroupVersionKind, namespace string) error {
	if k.informer.HasSynced() && CheckNamespace(k.informer, schema.GroupResource{}, namespace) == nil {
		return nil
	}
	resource := k.resource(gvk)
	if err := CheckSynced(k.informer, resource); err != nil {
		return err
	}
	return CheckNamespace(k.informer, resource, namespace)
}

// resource names gvk's resource in errors, as the API server does
// (`pods "x" not found`). Callers match errors by it, so it is the
// client's resource; a kind whose resource cannot be looked up (its CRD
// missing) is named by apimachinery's guess from the kind.
func (k *kindInformer) resource(gvk schema.GroupVersionKind) schema.GroupResource {
	if c, err := k.getClient(); err == nil {
		return c.GroupVersionResource().GroupResource()
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

// IsMetadataOnly reports whether informer is a SharedCacheFactory's
// informer of a MetadataOnly kind, whose store and handlers hold
// *metav1.PartialObjectMetadata.
func IsMetadataOnly(informer cache.SharedIndexInformer) bool {
	r, ok := informer.(*restartableInformer)
	return ok && r.meta != nil
}

// fullReader reads whole objects of a MetadataOnly kind and keeps the
// most recently read, one per UID.
type fullReader struct {
	newObj    runtime.Object
	getClient ClientFunc
	transform cache.TransformFunc
	size      int

	mu    sync.Mutex
	order *list.List // of *fullEntry, most recently used first
	byUID map[types.UID]*list.Element
}

type fullEntry struct {
	uid types.UID
	rv  string
	obj runtime.Object
}

func newFullReader(newObj runtime.Object, getClient ClientFunc, transform cache.TransformFunc, size int) *fullReader {
	return &fullReader{newObj: newObj, getClient: getClient, transform: transform, size: max(size, 1),
		order: list.New(), byUID: map[types.UID]*list.Element{}}
}

// get returns the object whose cached metadata is m: the kept one when it
// has m's resourceVersion, else a fresh read. A read without a
// resourceVersion is served from etcd, never older than what the watch
// that filled the cache had delivered.
func (r *fullReader) get(ctx context.Context, namespace, name string, m metav1.Object) (runtime.Object, error) {
	if obj := r.kept(m.GetUID(), m.GetResourceVersion()); obj != nil {
		return obj, nil
	}
	c, err := r.getClient()
	if err != nil {
		return nil, err
	}
	obj := r.newObj.DeepCopyObject()
	if err := c.Get(ctx, namespace, name, obj, metav1.GetOptions{}); err != nil {
		return nil, err
	}
	if r.transform != nil {
		out, err := r.transform(obj)
		if err != nil {
			return nil, err
		}
		obj = out.(runtime.Object)
	}
	read, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	r.keep(read.GetUID(), read.GetResourceVersion(), obj)
	return obj, nil
}

func (r *fullReader) kept(uid types.UID, rv string) runtime.Object {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byUID[uid]
	if !ok || e.Value.(*fullEntry).rv != rv {
		return nil
	}
	r.order.MoveToFront(e)
	return e.Value.(*fullEntry).obj
}

// keep puts obj in place of what was kept for its UID. Two reads that
// raced may leave the older one kept: get then only reads again, since a
// kept object is used only for the resourceVersion the cache has.
func (r *fullReader) keep(uid types.UID, rv string, obj runtime.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byUID[uid]; ok {
		e.Value = &fullEntry{uid: uid, rv: rv, obj: obj}
		r.order.MoveToFront(e)
		return
	}
	r.byUID[uid] = r.order.PushFront(&fullEntry{uid: uid, rv: rv, obj: obj})
	for r.order.Len() > r.size {
		last := r.order.Back()
		r.order.Remove(last)
		delete(r.byUID, last.Value.(*fullEntry).uid)
	}
}
