package lasso_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestWranglerHandlerNeverReadsAnUnsyncedCache: wrangler's caches cannot
// say that they have not synced (a miss is NotFound, a list is whatever the
// informer holds), so a wrangler handler must not run before every started
// kind has synced, as on lasso, even when Start is the adapter's, which
// returns the *cache.SyncError naming the kind that could not sync. Here
// the operator may list ConfigMaps but not (yet) Secrets, and the
// ConfigMap handler reads the Secret cache: it must never be told that the
// Secret does not exist.
func TestWranglerHandlerNeverReadsAnUnsyncedCache(t *testing.T) {
	cfg := cp.Config()
	ns := controlplanetest.Namespace(t, cfg)
	kube := controlplanetest.Clientset(cfg)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "child"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.FatalLevel)
	user := "system:serviceaccount:" + ns + ":operator"
	grant := func(name string, resources ...string) {
		t.Helper()
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}}
		if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
		if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grant("configmaps", "configmaps")
	opCfg := rest.CopyConfig(cfg)
	opCfg.Impersonate = rest.ImpersonationConfig{UserName: user}

	clients, err := client.NewSharedClientFactory(opCfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns}, SyncTimeout: 300 * time.Millisecond, Logger: log})
	lf, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	adapter := lasso.NewSharedControllerFactory(lf)
	coreF, err := core.NewFactoryFromConfigWithOptions(opCfg, &core.FactoryOptions{SharedControllerFactory: adapter})
	if err != nil {
		t.Fatal(err)
	}
	secrets := coreF.Core().V1().Secret()
	var mu sync.Mutex
	var reads []error
	coreF.Core().V1().ConfigMap().OnChange(ctx, "reads-secrets", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Name != "owner" {
			return cm, nil
		}
		_, err := secrets.Cache().Get(ns, "child")
		mu.Lock()
		reads = append(reads, err)
		mu.Unlock()
		return cm, err
	})

	err = adapter.Start(ctx, 1)
	var syncErr *cache.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("Start: %v, want a *cache.SyncError naming Secret", err)
	}
	if _, ok := syncErr.Unsynced[corev1.SchemeGroupVersion.WithKind("Secret")]; !ok {
		t.Fatalf("Start's sync error does not name Secret: %v", err)
	}
	grant("secrets", "secrets")
	eventually(t, "the ConfigMap handler reads the Secret", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reads) > 0 && reads[len(reads)-1] == nil
	})
	mu.Lock()
	defer mu.Unlock()
	for i, err := range reads {
		if apierrors.IsNotFound(err) {
			t.Fatalf("read %d of %d: the ConfigMap handler ran before the Secret cache synced and was told the Secret does not exist: %v", i+1, len(reads), err)
		}
	}
}
