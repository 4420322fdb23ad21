package controller_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// A handler for every ConfigMap, against a local control plane. In an
// operator the rest.Config would come from a kubeconfig or the pod's service
// account instead.
func ExampleSharedControllerFactory() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cluster.Stop()

	factory, err := controller.NewSharedControllerFactoryFromConfig(cluster.Config(), nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	configMaps, err := factory.ForObject(&corev1.ConfigMap{})
	if err != nil {
		fmt.Println(err)
		return
	}
	seen := make(chan string, 1)
	configMaps.RegisterHandler(ctx, "print", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if key == "kube-system/extension-apiserver-authentication" {
			select {
			case seen <- key:
			default:
			}
		}
		return obj, nil // pass the object on to the next handler
	}))
	if err := factory.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("handled", <-seen)
	// Output: handled kube-system/extension-apiserver-authentication
}
