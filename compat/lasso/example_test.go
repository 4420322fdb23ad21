package lasso_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// A wrangler v3 program moves onto Lariat's core by one option: its
// generated factory gets the adapter as its SharedControllerFactory. The
// handler below is unchanged wrangler code.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := cp.Config()
	const ns = "lasso-example"
	kube := controlplanetest.Clientset(cfg)
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	// Lariat's factories, here limited to one namespace.
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	factory, err := controller.NewSharedControllerFactory(caches, nil)
	if err != nil {
		fmt.Println(err)
		return
	}

	// The one line that changes in the wrangler program.
	wrangler, err := core.NewFactoryFromConfigWithOptions(cfg, &core.FactoryOptions{
		SharedControllerFactory: lasso.NewSharedControllerFactory(factory),
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	done := make(chan struct{})
	var once sync.Once
	wrangler.Core().V1().ConfigMap().OnChange(ctx, "print", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm != nil && cm.Name == "settings" {
			once.Do(func() {
				fmt.Println(key, cm.Data["mode"])
				close(done)
			})
		}
		return cm, nil
	})
	if err := wrangler.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	<-done
	// Output: lasso-example/settings fast
}
