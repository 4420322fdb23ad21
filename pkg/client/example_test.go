package client_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
)

// One factory serves every kind: built-in kinds are decoded into their Go
// types (over protobuf), kinds outside the scheme into unstructured objects.
func ExampleSharedClientFactory() {
	ctx := context.Background()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	configMaps, err := clients.ForObject(&corev1.ConfigMap{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var cm corev1.ConfigMap
	if err := configMaps.Get(ctx, "kube-system", "extension-apiserver-authentication", &cm, metav1.GetOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(configMaps.GroupVersionResource().Resource, cm.Kind, cm.Name)

	// The factory's scheme has no APIService type: unstructured it is.
	apiServices, err := clients.ForKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var svc unstructured.Unstructured
	if err := apiServices.Get(ctx, "", "v1.apps", &svc, metav1.GetOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(apiServices.GroupVersionResource().Resource, apiServices.Namespaced(), svc.GetKind(), svc.GetName())
	// Output:
	// configmaps ConfigMap extension-apiserver-authentication
	// apiservices false APIService v1.apps
}
