package main

import (
	"context"
	"fmt"

	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	corev1 "k8s.io/api/core/v1"

	compat "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// wranglerOnLariat is wrangler v3's generated ConfigMap controller run on
// Lariat's core through the lasso adapter (compat/lasso): the overhead of
// the adapter and of wrangler's generated layer over Lariat's own API.
type wranglerOnLariat struct{}

func (wranglerOnLariat) watch(ctx context.Context, w workload, kubeconfig, ns string, workers int, seen func(key, gen string)) error {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		return err
	}
	log := quietLogger()
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		return err
	}
	wrangler, err := core.NewFactoryFromConfigWithOptions(cfg, &core.FactoryOptions{SharedControllerFactory: compat.NewSharedControllerFactory(factory)})
	if err != nil {
		return err
	}
	// wrangler's generated controllers are typed: one registration per kind.
	switch w.name {
	case "pods":
		wrangler.Core().V1().Pod().OnChange(ctx, "bench", func(key string, pod *corev1.Pod) (*corev1.Pod, error) {
			if pod != nil {
				seen(key, w.gen(pod))
			}
			return pod, nil
		})
	case "crs":
		return fmt.Errorf("wrangler-on-lariat: wrangler has no generated controller for the crs workload's kind")
	default:
		wrangler.Core().V1().ConfigMap().OnChange(ctx, "bench", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm != nil {
				seen(key, w.gen(cm))
			}
			return cm, nil
		})
	}
	return wrangler.Start(ctx, workers)
}

// dispatch is Lariat's: the adapter hands keys to Lariat's queue and adds
// nothing to it.
func (wranglerOnLariat) dispatch(ctx context.Context, workers int, handled func()) (func(string), error) {
	return lariat{}.dispatch(ctx, workers, handled)
}
