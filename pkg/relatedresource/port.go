package relatedresource

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// AllKey, as the Name of a resolved Key, enqueues every cached object of
// the enqueuer's kind (in the Key's namespace, or everywhere when it is
// empty): for settings objects that every object of another kind depends
// on. Wrangler enqueues a pseudo-object named AllKey that handlers must
// recognise; Lariat enqueues the objects themselves, so handlers need no
// special case. The enqueuer must have an Informer method (generic and
// shared controllers do) to find them.
const AllKey = "_all_"

// TriggerAllKey is a Resolver that enqueues every object of the
// enqueuer's kind for any change of a watched object.
func TriggerAllKey(string, string, runtime.Object) ([]Key, error) {
	return []Key{{Name: AllKey}}, nil
}

// ClusterScopedEnqueuer is the enqueuer of a cluster-scoped kind, such as a
// generic.NonNamespacedController, whose Enqueue takes a name only.
type ClusterScopedEnqueuer interface {
	// Enqueue queues the object of name.
	Enqueue(name string)
}

// ClusterScoped adapts a cluster-scoped kind's enqueuer to Enqueuer: the
// keys' namespaces are ignored. The enqueuer's Informer, when it has one,
// is kept, so AllKey works through it.
func ClusterScoped(enqueuer ClusterScopedEnqueuer) Enqueuer {
	if i, ok := enqueuer.(informed); ok {
		return clusterScopedInformed{clusterScoped{enqueuer}, i}
	}
	return clusterScoped{enqueuer}
}

type clusterScoped struct{ ClusterScopedEnqueuer }

func (c clusterScoped) Enqueue(_, name string) { c.ClusterScopedEnqueuer.Enqueue(name) }

type clusterScopedInformed struct {
	clusterScoped
	informed
}

// informed is an enqueuer whose objects can be listed, for AllKey.
type informed interface {
	Informer() cache.SharedIndexInformer
}

// WatchClusterScoped is Watch for owners of a cluster-scoped kind: the
// resolved keys' names are enqueued into enqueuer (wrangler's
// WatchClusterScoped).
func WatchClusterScoped(ctx context.Context, name string, resolve Resolver, enqueuer ClusterScopedEnqueuer, watching ...Watchable) {
	Watch(ctx, name, resolve, ClusterScoped(enqueuer), watching...)
}

// OwnerResolver resolves an object to its owners of one kind, read from its
// owner references: apiVersion gives the owners' group (their version is
// ignored, as an object's identity never includes it) and kind their kind.
// namespaced says whether the owners' kind is namespaced; their namespace
// is then the object's, the only one an owner reference can point into.
func OwnerResolver(namespaced bool, apiVersion, kind string) Resolver {
	group := ""
	if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
		group = gv.Group
	}
	return func(namespace, _ string, obj runtime.Object) ([]Key, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("owner resolver: %w", err)
		}
		var keys []Key
		for _, ref := range m.GetOwnerReferences() {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil || gv.Group != group || ref.Kind != kind {
				continue
			}
			key := Key{Name: ref.Name}
			if namespaced {
				key.Namespace = namespace
			}
			keys = append(keys, key)
		}
		return keys, nil
	}
}

// enqueueAll enqueues every cached object of enqueuer's kind in namespace
// ("" for all).
func enqueueAll(enqueuer Enqueuer, namespace string) error {
	i, ok := enqueuer.(informed)
	if !ok {
		return fmt.Errorf("relatedresource: %T cannot enqueue all its objects: it has no Informer method", enqueuer)
	}
	for _, key := range i.Informer().GetStore().ListKeys() {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return err
		}
		if namespace == "" || ns == namespace {
			enqueuer.Enqueue(ns, name)
		}
	}
	return nil
}
