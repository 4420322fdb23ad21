package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	crbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// controllerRuntimeMetadata is lariat-metadata's fair peer: the same
// controller on controller-runtime's metadata-only cache
// (builder.OnlyMetadata: a metadata informer holding
// PartialObjectMetadata), managedFields stripped as Lariat's cache strips
// them (controller-runtime-strip's transform). The reconciler reads the
// object's metadata from the cache by name and, for one event in
// fullEvery, the whole object from the API server (the manager's API
// reader: controller-runtime keeps no whole objects for a metadata-only
// kind), checking its UID as lariat-metadata does.
type controllerRuntimeMetadata struct {
	controllerRuntime // dispatch: the metadata-only cache is not on its path
	fullEvery         int64
}

func (c controllerRuntimeMetadata) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	if !w.markerInMetadata {
		return fmt.Errorf("controller-runtime-metadata: the %s workload's marker is not in the objects' metadata (use pods or crs)", w.name)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	crlog.SetLogger(logr.Discard())
	mgr, err := crmanager.New(cfg, crmanager.Options{
		Cache: crcache.Options{
			DefaultNamespaces: map[string]crcache.Config{ns: {}},
			DefaultTransform:  crcache.TransformStripManagedFields(),
		},
		Metrics:                crmetrics.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	})
	if err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(w.newObject(), mgr.GetScheme())
	if err != nil {
		return err
	}
	var events atomic.Int64
	reconciler := crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, m); err != nil {
			return crreconcile.Result{}, crclient.IgnoreNotFound(err)
		}
		if events.Add(1)%c.fullEvery == 0 {
			full := w.newObject()
			if err := mgr.GetAPIReader().Get(ctx, req.NamespacedName, full); err != nil {
				return crreconcile.Result{}, err
			}
			if full.GetUID() != m.GetUID() {
				return crreconcile.Result{}, fmt.Errorf("GET of %s: UID %s, the cache's %s", req, full.GetUID(), m.GetUID())
			}
		}
		seen(req.String(), m.GetAnnotations()["bench/gen"])
		return crreconcile.Result{}, nil
	})
	err = crbuilder.ControllerManagedBy(mgr).For(w.newObject(), crbuilder.OnlyMetadata).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers, SkipNameValidation: ptr.To(true)}).
		Complete(reconciler)
	if err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			fmt.Println("controller-runtime manager:", err)
		}
	}()
	return nil
}
