package relatedresource_test

import (
	"context"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/relatedresource"
)

// TestOwnerResolverOnMetadataOnlyChildren shows owner lookups working on
// a kind the cache holds metadata of only: Secrets cached as
// PartialObjectMetadata, resolved to their owning ConfigMap by
// OwnerResolver, enqueue the owner when created and when deleted.
func TestOwnerResolverOnMetadataOnlyChildren(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owner, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	secretGVK := corev1.SchemeGroupVersion.WithKind("Secret")
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log,
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{secretGVK: {MetadataOnly: ptr.To(true)}}})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := factory.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := factory.ForKind(secretGVK)
	if err != nil {
		t.Fatal(err)
	}
	calls := &counter{calls: map[string]int{}}
	configMaps.RegisterHandler(ctx, "count", controller.SharedHandlerFunc(func(key string, _ runtime.Object) (runtime.Object, error) {
		calls.mu.Lock()
		calls.calls[key]++
		calls.mu.Unlock()
		return nil, nil
	}))
	var notMeta []string
	secrets.RegisterHandler(ctx, "types", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if _, ok := obj.(*metav1.PartialObjectMetadata); obj != nil && !ok {
			calls.mu.Lock()
			notMeta = append(notMeta, key)
			calls.mu.Unlock()
		}
		return obj, nil
	}))
	relatedresource.Watch(ctx, "secret-to-owner", relatedresource.OwnerResolver(true, "v1", "ConfigMap"), configMaps, relatedresource.FromSharedController(secrets))
	if err := factory.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	key := ns + "/a"
	calls.waitAbove(t, key, 0, "initial list")

	n := calls.get(key)
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: owner.UID}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", OwnerReferences: []metav1.OwnerReference{ref}}, StringData: map[string]string{"k": "v"}}
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, key, n, "owned secret created")
	n = calls.get(key)
	if err := kube.CoreV1().Secrets(ns).Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, key, n, "owned secret deleted")
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(notMeta) > 0 {
		t.Fatalf("the metadata-only kind's handler was given whole objects for %v", notMeta)
	}
}
