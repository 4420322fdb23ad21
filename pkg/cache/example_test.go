package cache_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// An informer scoped to one namespace and label, whose store keeps no
// managedFields. The last-applied annotation that kubectl apply writes is
// kept, so an object copied from the cache and written back with Update
// does not lose it on the server.
func ExampleSharedCacheFactory() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:        "cache-example",
		Labels:      map[string]string{"app": "cache-example"},
		Annotations: map[string]string{cache.LastAppliedAnnotation: `{"a":"large copy of the object"}`},
	}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: "default", LabelSelector: "app=cache-example"},
	})
	informer, err := caches.ForObject(&corev1.ConfigMap{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := caches.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := caches.WaitForCacheSync(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range informer.GetStore().List() {
		cm := obj.(*corev1.ConfigMap)
		_, lastApplied := cm.Annotations[cache.LastAppliedAnnotation]
		fmt.Println(cm.Name, "managedFields:", len(cm.ManagedFields), "last-applied kept:", lastApplied)
	}
	// Output: cache-example managedFields: 0 last-applied kept: true
}

// A kind whose CRD is not installed cannot sync. WaitForCacheSync names it
// in a *SyncError instead of waiting forever, and the other kinds run.
func ExampleSyncError() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{SyncTimeout: 2 * time.Second})
	missing := schema.GroupVersionKind{Group: "example.lariat.dev", Version: "v1", Kind: "Missing"}
	for _, gvk := range []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Namespace"), missing} {
		if _, err := caches.ForKind(gvk); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := caches.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	synced, err := caches.WaitForCacheSync(ctx)
	var syncErr *cache.SyncError
	if errors.As(err, &syncErr) {
		for gvk := range syncErr.Unsynced {
			fmt.Println("not synced:", gvk.Kind)
		}
	}
	fmt.Println("namespaces synced:", synced[corev1.SchemeGroupVersion.WithKind("Namespace")])
	// Output:
	// not synced: Missing
	// namespaces synced: true
}
