package relatedresource_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	corectl "github.com/lariat-dev/lariat/generated/controllers/core/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/relatedresource"
)

// coreControllers returns the generated ConfigMap, Secret and Namespace
// controllers, caching namespaced kinds in ns only, each counting its
// handler's calls per key.
func coreControllers(t *testing.T, ctx context.Context, ns string) (*core.Factory, corectl.ConfigMapController, corectl.SecretController, corectl.NamespaceController, *counter) {
	t.Helper()
	f, err := core.NewFactoryFromConfigWithOptions(cp.Config(), &core.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := f.Core().V1().ConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := f.Core().V1().Secret()
	if err != nil {
		t.Fatal(err)
	}
	namespaces, err := f.Core().V1().Namespace()
	if err != nil {
		t.Fatal(err)
	}
	calls := &counter{calls: map[string]int{}}
	count := func(key string) {
		calls.mu.Lock()
		calls.calls[key]++
		calls.mu.Unlock()
	}
	configMaps.OnChange(ctx, "count", func(key string, obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		count(key)
		return nil, nil
	})
	namespaces.OnChange(ctx, "count", func(key string, obj *corev1.Namespace) (*corev1.Namespace, error) {
		count(key)
		return nil, nil
	})
	return f, configMaps, secrets, namespaces, calls
}

// A cluster-scoped owner (a Namespace) is re-run when an object it owns
// changes: WatchClusterScoped with OwnerResolver for a cluster-scoped kind.
func TestWatchClusterScopedOwnerResolver(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	ctx := t.Context()
	owner, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, _, secrets, namespaces, calls := coreControllers(t, ctx, ns)
	relatedresource.WatchClusterScoped(ctx, "secret-to-namespace", relatedresource.OwnerResolver(false, "v1", "Namespace"), namespaces, secrets)
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, ns, 0, "initial list")
	before := calls.get(ns)
	// A Secret without an owner reference enqueues nothing; then one
	// owned by the namespace re-runs it.
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: owner.UID}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, ns, before, "secret owned by the namespace created")
}

// OwnerResolver for a namespaced owner kind enqueues the owners named by
// the object's references to that kind only, in the object's namespace.
func TestOwnerResolverNamespaced(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	ctx := t.Context()
	owner, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, configMaps, secrets, _, calls := coreControllers(t, ctx, ns)
	relatedresource.Watch(ctx, "secret-to-owner", relatedresource.OwnerResolver(true, "v1", "ConfigMap"), configMaps, secrets)
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	key := ns + "/app"
	calls.waitAbove(t, key, 0, "initial list")
	before := calls.get(key)
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "app", UID: owner.UID}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, key, before, "owned secret created")
}

// AllKey re-runs every cached object of the enqueuer's kind: a change of
// any Secret re-runs all ConfigMaps, through TriggerAllKey.
func TestTriggerAllKeyEnqueuesEveryObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	ctx := t.Context()
	for _, name := range []string{"a", "b"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f, configMaps, secrets, _, calls := coreControllers(t, ctx, ns)
	relatedresource.Watch(ctx, "settings", relatedresource.TriggerAllKey, configMaps, secrets)
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	keyA, keyB := ns+"/a", ns+"/b"
	calls.waitAbove(t, keyA, 0, "initial list")
	calls.waitAbove(t, keyB, 0, "initial list")
	a, b := calls.get(keyA), calls.get(keyB)
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, keyA, a, "settings changed")
	calls.waitAbove(t, keyB, b, "settings changed")
	if n := calls.get(ns + "/" + relatedresource.AllKey); n != 0 {
		t.Fatalf("the pseudo-key %s was handled %d times; its objects should be", relatedresource.AllKey, n)
	}
}
