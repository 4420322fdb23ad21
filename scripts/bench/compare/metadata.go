package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// lariatMetadata is Lariat with the watched kind metadata-only
// (cache.KindOptions.MetadataOnly): the cache and the handler hold
// *metav1.PartialObjectMetadata, and the handler reads the whole object
// through SharedCacheFactory.GetFull for one event in fullEvery. It models
// a controller that decides from labels, annotations and owners (a
// sidecar or policy controller that filters Pods by label, an owner
// resolver) and needs the spec only for the few objects it acts on. Its
// memory rows are what such a controller holds; its steady state includes
// the GETs of the objects it reads whole. It needs a workload whose marker
// is an annotation (pods, crs).
type lariatMetadata struct {
	lariat
	fullEvery int64
}

func (l lariatMetadata) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	if !w.markerInMetadata {
		return fmt.Errorf("lariat-metadata: the %s workload's marker is not in the objects' metadata (use pods or crs)", w.name)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		return err
	}
	gvk, err := clients.GVKForObject(w.newObject())
	if err != nil {
		return err
	}
	log := quietLogger()
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{gvk: {MetadataOnly: ptr.To(true)}},
		Logger:  log,
	})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		return err
	}
	c, err := factory.ForKind(gvk)
	if err != nil {
		return err
	}
	var events atomic.Int64
	c.RegisterHandler(ctx, "bench", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if events.Add(1)%l.fullEvery == 0 {
			if err := readWhole(ctx, caches, gvk, m); err != nil {
				return nil, err
			}
		}
		seen(key, m.GetAnnotations()["bench/gen"])
		return obj, nil
	}))
	return factory.Start(ctx, workers)
}

// readWhole reads the object m is the metadata of through GetFull and
// checks that it is the same object (its UID), as a handler acting on it
// would.
func readWhole(ctx context.Context, caches *cache.SharedCacheFactory, gvk schema.GroupVersionKind, m metav1.Object) error {
	full, err := caches.GetFull(ctx, gvk, m.GetNamespace(), m.GetName())
	if err != nil {
		return err
	}
	fm, err := meta.Accessor(full)
	if err != nil {
		return err
	}
	if fm.GetUID() != m.GetUID() {
		return fmt.Errorf("GetFull of %s/%s: UID %s, the cache's %s", m.GetNamespace(), m.GetName(), fm.GetUID(), m.GetUID())
	}
	return nil
}
