package relatedresource_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/relatedresource"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

// counter counts handler calls per key.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}

func (c *counter) waitAbove(t *testing.T, key string, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.get(key) <= n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not handled again (still %d calls)", what, key, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRelatedChangesEnqueueOwnersIncludingPreviousOnes(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range []string{"a", "b"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := factory.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := factory.ForObject(&corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	calls := &counter{calls: map[string]int{}}
	configMaps.RegisterHandler(ctx, "count", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		calls.mu.Lock()
		calls.calls[key]++
		calls.mu.Unlock()
		return nil, nil
	}))
	// A Secret belongs to the ConfigMap named by its "app" label.
	byApp := func(namespace, name string, obj runtime.Object) ([]relatedresource.Key, error) {
		if app := obj.(*corev1.Secret).Labels["app"]; app != "" {
			return []relatedresource.Key{relatedresource.NewKey(namespace, app)}, nil
		}
		return nil, nil
	}
	relatedresource.Watch(ctx, "secrets-to-apps", byApp, configMaps, relatedresource.FromSharedController(secrets))
	if err := factory.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	keyA, keyB := ns+"/a", ns+"/b"
	calls.waitAbove(t, keyA, 0, "initial list")
	calls.waitAbove(t, keyB, 0, "initial list")

	secretsAPI := kube.CoreV1().Secrets(ns)
	a, b := calls.get(keyA), calls.get(keyB)
	secret, err := secretsAPI.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"app": "a"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, keyA, a, "secret created for a")

	// Moving the secret to b re-runs b, and a, which just lost it.
	a = calls.get(keyA)
	secret.Labels["app"] = "b"
	if _, err := secretsAPI.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, keyB, b, "secret moved to b")
	calls.waitAbove(t, keyA, a, "secret moved away from a")

	// Deleting it re-runs its last owner, which the resolver cannot tell
	// from a deleted object.
	b = calls.get(keyB)
	if err := secretsAPI.Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.waitAbove(t, keyB, b, "secret deleted")
}
