package main

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	lassocache "github.com/rancher/lasso/pkg/cache"
	lassocontroller "github.com/rancher/lasso/pkg/controller"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	crbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	crsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// frameworkNames lists the frameworks in table order: Lariat (with its
// default protobuf wire format, and with JSON to show what protobuf saves),
// then the peers (controller-runtime both as its users run it by default
// and with its managedFields-stripping transform, its best configuration
// for memory), then wrangler's generated controllers on Lariat's core (not
// a peer: its column shows the lasso adapter's overhead). lariat-metadata
// and its fair peer controller-runtime-metadata are not among them: they
// run the workloads whose marker is in the objects' metadata only
// (-frameworks names them).
var frameworkNames = []string{"lariat", "lariat-intern", "lariat-compact", "lariat-json", "lariat-stream", "lasso", "controller-runtime", "controller-runtime-strip", "wrangler-on-lariat"}

var frameworksByName = map[string]framework{
	"lariat":                   lariat{},
	"lariat-intern":            lariat{intern: true},
	"lariat-compact":           lariat{compact: true},
	"lariat-json":              lariat{jsonOnly: true},
	"lariat-stream":            lariat{stream: true},
	"lariat-metadata":          lariatMetadata{fullEvery: 100},
	"lasso":                    lasso{},
	"controller-runtime":       controllerRuntime{},
	"controller-runtime-strip": controllerRuntime{strip: true},
	// lariat-metadata's fair peer, not a peer of the other columns (see
	// isPeer).
	"controller-runtime-metadata": controllerRuntimeMetadata{fullEvery: 100},
	"wrangler-on-lariat":          wranglerOnLariat{},
}

// restConfig loads the kubeconfig with client-side throttling off, the same
// for every framework.
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1
	return cfg, nil
}

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	return l
}

// emptyInformer is an informer over no objects that syncs at once, for
// dispatch runs without an API server.
func emptyInformer() toolscache.SharedIndexInformer {
	lw := &noWatchList{&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
	return toolscache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, toolscache.Indexers{})
}

// noWatchList tells the reflector to list rather than stream, since the fake
// watch never sends the bookmark a streaming list waits for.
type noWatchList struct{ *toolscache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// lariat is Lariat's shared controller factory; compact stores the objects
// encoded (cache.Options.Compact), jsonOnly turns protobuf off, stream
// hands the initial list's objects to handlers as they arrive and starts
// workers on them before the sync (cache.Options.StreamInitialList),
// intern makes the objects share their equal strings
// (cache.Options.InternStrings).
type lariat struct{ jsonOnly, compact, stream, intern bool }

// watchReturnsAtSync: Lariat's watch returns once its caches synced
// (SharedControllerFactory.Start waits for them).
func (lariat) watchReturnsAtSync() {}

func (l lariat) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{JSONOnly: l.jsonOnly})
	if err != nil {
		return err
	}
	log := quietLogger()
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, Compact: l.compact, StreamInitialList: l.stream, InternStrings: l.intern}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		return err
	}
	c, err := factory.ForObject(w.newObject())
	if err != nil {
		return err
	}
	c.RegisterHandler(ctx, "bench", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj != nil {
			seen(key, w.gen(obj))
		}
		return obj, nil
	}))
	return factory.Start(ctx, workers)
}

func (lariat) dispatch(ctx context.Context, workers int, handled func()) (func(string), error) {
	informer := emptyInformer()
	go informer.RunWithContext(ctx)
	c, err := controller.New("dispatch", informer, controller.HandlerFunc(func(string, runtime.Object) error {
		handled()
		return nil
	}), &controller.Options{Logger: quietLogger()})
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx, workers); err != nil {
		return nil, err
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("informer did not sync")
	}
	return c.EnqueueKey, nil
}

type lasso struct{}

func (lasso) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	logrus.SetLevel(logrus.WarnLevel) // lasso logs through the standard logger
	factory, err := lassocontroller.NewSharedControllerFactoryFromConfigWithOptions(cfg, scheme.Scheme,
		&lassocontroller.SharedControllerFactoryOptions{CacheOptions: &lassocache.SharedCacheFactoryOptions{DefaultNamespace: ns}})
	if err != nil {
		return err
	}
	c, err := factory.ForObject(w.newObject())
	if err != nil {
		return err
	}
	c.RegisterHandler(ctx, "bench", lassocontroller.SharedControllerHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj != nil {
			seen(key, w.gen(obj))
		}
		return obj, nil
	}))
	return factory.Start(ctx, workers)
}

func (lasso) dispatch(ctx context.Context, workers int, handled func()) (func(string), error) {
	logrus.SetLevel(logrus.WarnLevel)
	informer := emptyInformer()
	startCache := func(ctx context.Context) error {
		go informer.RunWithContext(ctx)
		return nil
	}
	c := lassocontroller.New("dispatch", informer, startCache, lassocontroller.HandlerFunc(func(string, runtime.Object) error {
		handled()
		return nil
	}), nil)
	if err := c.Start(ctx, workers); err != nil { // waits for the informer to sync
		return nil, err
	}
	return c.EnqueueKey, nil
}

// controllerRuntime is controller-runtime's manager; with strip, its cache
// drops managedFields (crcache.TransformStripManagedFields, the transform
// its documentation recommends for memory).
type controllerRuntime struct{ strip bool }

func (c controllerRuntime) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	crlog.SetLogger(logr.Discard())
	cacheOptions := crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}}}
	if c.strip {
		cacheOptions.DefaultTransform = crcache.TransformStripManagedFields()
	}
	mgr, err := crmanager.New(cfg, crmanager.Options{
		Cache:                  cacheOptions,
		Metrics:                crmetrics.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	})
	if err != nil {
		return err
	}
	// The usual reconciler shape: read the object from the cache by name.
	reconciler := crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
		obj := w.newObject()
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, obj); err != nil {
			return crreconcile.Result{}, crclient.IgnoreNotFound(err)
		}
		seen(req.String(), w.gen(obj))
		return crreconcile.Result{}, nil
	})
	err = crbuilder.ControllerManagedBy(mgr).For(w.newObject()).
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

func (controllerRuntime) dispatch(ctx context.Context, workers int, handled func()) (func(string), error) {
	crlog.SetLogger(logr.Discard())
	c, err := crcontroller.NewTypedUnmanaged[crreconcile.Request]("dispatch", crcontroller.TypedOptions[crreconcile.Request]{
		Reconciler: crreconcile.Func(func(context.Context, crreconcile.Request) (crreconcile.Result, error) {
			handled()
			return crreconcile.Result{}, nil
		}),
		MaxConcurrentReconciles: workers,
		SkipNameValidation:      ptr.To(true),
		Logger:                  logr.Discard(),
	})
	if err != nil {
		return nil, err
	}
	queues := make(chan workqueue.TypedRateLimitingInterface[crreconcile.Request], 1)
	err = c.Watch(crsource.TypedFunc[crreconcile.Request](func(_ context.Context, q workqueue.TypedRateLimitingInterface[crreconcile.Request]) error {
		queues <- q
		return nil
	}))
	if err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	var q workqueue.TypedRateLimitingInterface[crreconcile.Request]
	select {
	case q = <-queues:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return func(key string) {
		ns, name, _ := toolscache.SplitMetaNamespaceKey(key)
		q.Add(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	}, nil
}
