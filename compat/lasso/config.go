package lasso

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	lassocache "github.com/rancher/lasso/pkg/cache"
	lassocontroller "github.com/rancher/lasso/pkg/controller"
	lassoscheme "github.com/rancher/lasso/pkg/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// NewSharedControllerFactoryFromConfig is lasso's function of the same
// name on Lariat's core: see NewSharedControllerFactoryFromConfigWithOptions.
func NewSharedControllerFactoryFromConfig(cfg *rest.Config, scheme *runtime.Scheme) (lassocontroller.SharedControllerFactory, error) {
	return NewSharedControllerFactoryFromConfigWithOptions(cfg, scheme, nil)
}

// NewSharedControllerFactoryFromConfigWithOptions takes what lasso's
// controller.NewSharedControllerFactoryFromConfigWithOptions takes and
// returns lasso's SharedControllerFactory on Lariat's client, cache and
// controller factories (its dynamic type is *SharedControllerFactory, whose
// Lariat method reaches Lariat's API), so that porting a wrangler
// operator's main is one changed import:
//
//	controller "github.com/rancher/lasso/pkg/controller"
//
// becomes
//
//	controller "github.com/lariat-dev/lariat/compat/lasso"
//
// A nil scheme is lasso's scheme.All, which wrangler's schemes.All is and
// into which wrangler's generated packages register their kinds, as on
// lasso. lasso's options are translated: DefaultNamespace, DefaultResync,
// DefaultTweakList and their Kind* forms become Lariat's cache options
// (a tweak may set label and field selectors only: Lariat's informers
// list in pages and watch with bookmarks of their own), DefaultWorkers and
// KindWorkers its workers, DefaultRateLimiter and KindRateLimiter the
// queues' retry delays, SyncOnlyChangedObjects as it is. The watch-list
// switches are accepted and have no effect (Lariat's informers decide),
// and MetricsCollectionPeriod is not needed (Lariat counts cached objects
// when scraped). HealthCallback is refused with an error: Lariat reports
// each kind's health on demand (Lariat().SharedCacheFactory().WatchHealth).
func NewSharedControllerFactoryFromConfigWithOptions(cfg *rest.Config, scheme *runtime.Scheme, opts *lassocontroller.SharedControllerFactoryOptions) (lassocontroller.SharedControllerFactory, error) {
	if scheme == nil {
		scheme = lassoscheme.All
	}
	if opts == nil {
		opts = &lassocontroller.SharedControllerFactoryOptions{}
	}
	cacheOpts, err := cacheOptions(opts.CacheOptions)
	if err != nil {
		return nil, err
	}
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	controllers, err := controller.NewSharedControllerFactory(cache.NewSharedCacheFactory(clients, cacheOpts), controllerOptions(opts))
	if err != nil {
		return nil, err
	}
	f := NewSharedControllerFactory(controllers)
	f.defaultWorkers = opts.DefaultWorkers
	return f, nil
}

// controllerOptions translates lasso's controller options but for
// DefaultWorkers, which Start applies.
func controllerOptions(opts *lassocontroller.SharedControllerFactoryOptions) *controller.SharedControllerFactoryOptions {
	out := &controller.SharedControllerFactoryOptions{
		KindWorkers:            opts.KindWorkers,
		SyncOnlyChangedObjects: opts.SyncOnlyChangedObjects,
	}
	if opts.DefaultRateLimiter != nil || len(opts.KindRateLimiter) > 0 {
		out.RateLimiter = func(gvk schema.GroupVersionKind) clientworkqueue.TypedRateLimiter[string] {
			l, ok := opts.KindRateLimiter[gvk]
			if !ok {
				l = opts.DefaultRateLimiter
			}
			if l == nil {
				return nil
			}
			return stringKeys{l}
		}
	}
	return out
}

// stringKeys is one of lasso's rate limiters, keyed by any, over Lariat's
// queues, keyed by string. A limiter lasso shares between kinds stays
// shared, as on lasso.
type stringKeys struct {
	clientworkqueue.TypedRateLimiter[any]
}

func (s stringKeys) When(key string) time.Duration { return s.TypedRateLimiter.When(key) }
func (s stringKeys) Forget(key string)             { s.TypedRateLimiter.Forget(key) }
func (s stringKeys) NumRequeues(key string) int    { return s.TypedRateLimiter.NumRequeues(key) }

// cacheOptions translates lasso's cache options into Lariat's.
func cacheOptions(opts *lassocache.SharedCacheFactoryOptions) (*cache.SharedCacheFactoryOptions, error) {
	out := &cache.SharedCacheFactoryOptions{}
	if opts == nil {
		return out, nil
	}
	if opts.HealthCallback != nil {
		return nil, errors.New("lasso: SharedCacheFactoryOptions.HealthCallback is not supported on Lariat's core; " +
			"read each kind's health with Lariat().SharedCacheFactory().WatchHealth() instead")
	}
	var err error
	out.Default = cache.Options{Namespace: opts.DefaultNamespace, Resync: opts.DefaultResync}
	if out.Default.LabelSelector, out.Default.FieldSelector, err = selectors(opts.DefaultTweakList); err != nil {
		return nil, fmt.Errorf("lasso: DefaultTweakList: %w", err)
	}
	kinds := map[schema.GroupVersionKind]cache.KindOptions{}
	for gvk, ns := range opts.KindNamespace {
		k := kinds[gvk]
		k.Namespace = &ns
		kinds[gvk] = k
	}
	for gvk, resync := range opts.KindResync {
		k := kinds[gvk]
		k.Resync = &resync
		kinds[gvk] = k
	}
	for gvk, tweak := range opts.KindTweakList {
		labels, fields, err := selectors(tweak)
		if err != nil {
			return nil, fmt.Errorf("lasso: KindTweakList of %s: %w", gvk, err)
		}
		k := kinds[gvk]
		k.LabelSelector, k.FieldSelector = &labels, &fields
		kinds[gvk] = k
	}
	if len(kinds) > 0 {
		out.Kinds = kinds
	}
	return out, nil
}

// selectors runs a lasso list tweak on empty list options and returns the
// selectors it set. A tweak that sets anything else is refused, rather than
// silently not applied: Lariat's informers choose their own paging,
// timeouts and resourceVersions.
func selectors(tweak lassocache.TweakListOptionsFunc) (labels, fields string, err error) {
	if tweak == nil {
		return "", "", nil
	}
	var o metav1.ListOptions
	tweak(&o)
	labels, fields = o.LabelSelector, o.FieldSelector
	o.LabelSelector, o.FieldSelector = "", ""
	if !reflect.DeepEqual(o, metav1.ListOptions{}) {
		return "", "", fmt.Errorf("the tweak sets list options other than label and field selectors (%+v), which Lariat's informers set themselves", o)
	}
	return labels, fields, nil
}
