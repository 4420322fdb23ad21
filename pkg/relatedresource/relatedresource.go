// Package relatedresource re-runs the handlers of an object when objects
// related to it change: a Deployment's owner when the Deployment's status
// changes, every app that mounts a ConfigMap when the ConfigMap is edited.
// It keeps wrangler's relatedresource.Watch shape, and adds what wrangler
// leaves to the resolver: when a related object is deleted, or stops
// pointing at an owner, the owners it pointed at before are enqueued too.
//
// For a port from wrangler: WatchClusterScoped, OwnerResolver, AllKey and
// TriggerAllKey keep their names; ClusterScoped makes a cluster-scoped
// kind's controller (generic.NonNamespacedController) an Enqueuer.
package relatedresource

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// Key names an object to enqueue; Namespace is empty for cluster-scoped
// kinds.
type Key struct {
	Namespace string
	Name      string
}

// NewKey returns the Key of namespace/name.
func NewKey(namespace, name string) Key { return Key{Namespace: namespace, Name: name} }

// Resolver returns the objects to enqueue when the related object
// namespace/name changes. obj is never nil: for deletions, Watch enqueues
// what the resolver returned last for the object without calling it.
type Resolver func(namespace, name string, obj runtime.Object) ([]Key, error)

// Enqueuer is what gets the resolved keys, typically the owners' controller.
type Enqueuer interface {
	// Enqueue queues namespace/name (an empty namespace for a
	// cluster-scoped object).
	Enqueue(namespace, name string)
}

// Watchable is a controller whose changes can be watched: generic
// controllers have this method; wrap a controller.SharedController with
// FromSharedController.
type Watchable interface {
	// AddGenericHandler registers handler, named name, for the
	// controller's changes until ctx ends.
	AddGenericHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc)
}

// FromSharedController adapts a SharedController to Watchable.
func FromSharedController(c controller.SharedController) Watchable { return sharedWatchable{c} }

type sharedWatchable struct{ controller.SharedController }

func (s sharedWatchable) AddGenericHandler(ctx context.Context, name string, handler controller.SharedHandlerFunc) {
	s.RegisterHandler(ctx, name, handler)
}

// Watch enqueues into enqueuer the keys resolve returns for every change of
// an object of the watched kinds, until ctx ends. name names the handler it
// registers on each watched controller. A resolver error fails that handler,
// so the related object's key is retried with backoff.
func Watch(ctx context.Context, name string, resolve Resolver, enqueuer Enqueuer, watching ...Watchable) {
	for _, w := range watching {
		r := &relation{resolve: resolve, enqueuer: enqueuer, last: map[string][]Key{}}
		w.AddGenericHandler(ctx, name, r.onChange)
	}
}

// relation remembers, per related object, the keys it resolved to last, so
// that deletions and changes of owner reach the owners left behind.
type relation struct {
	resolve  Resolver
	enqueuer Enqueuer

	mu   sync.Mutex
	last map[string][]Key
}

func (r *relation) onChange(key string, obj runtime.Object) (runtime.Object, error) {
	var keys []Key
	if obj != nil {
		namespace, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil, err
		}
		if keys, err = r.resolve(namespace, name, obj); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	previous := r.last[key]
	if obj == nil || len(keys) == 0 {
		delete(r.last, key)
	} else {
		r.last[key] = keys
	}
	r.mu.Unlock()

	seen := make(map[Key]bool, len(keys)+len(previous))
	for _, ks := range [][]Key{keys, previous} {
		for _, k := range ks {
			if seen[k] || k.Name == "" {
				continue
			}
			seen[k] = true
			if k.Name == AllKey {
				if err := enqueueAll(r.enqueuer, k.Namespace); err != nil {
					return nil, err
				}
				continue
			}
			r.enqueuer.Enqueue(k.Namespace, k.Name)
		}
	}
	return nil, nil
}
