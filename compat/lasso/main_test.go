package lasso_test

import (
	"context"
	"testing"
	"time"

	"github.com/rancher/wrangler/v3/pkg/generated/controllers/apps"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{}, &cp)
}

// env is one test's operator: Lariat's factories scoped to the test's
// namespace, the lasso adapter over them, and wrangler's generated
// factories built on the adapter.
type env struct {
	ns      string
	adapter *lasso.SharedControllerFactory
	core    *core.Factory
	apps    *apps.Factory
	kube    *kubernetes.Clientset
}

func newEnv(t *testing.T, opts *controller.SharedControllerFactoryOptions, syncTimeout time.Duration) *env {
	t.Helper()
	cfg := cp.Config()
	ns := controlplanetest.Namespace(t, cfg)
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default:     cache.Options{Namespace: ns},
		SyncTimeout: syncTimeout,
	})
	lf, err := controller.NewSharedControllerFactory(caches, opts)
	if err != nil {
		t.Fatal(err)
	}
	adapter := lasso.NewSharedControllerFactory(lf)
	coreF, err := core.NewFactoryFromConfigWithOptions(cfg, &core.FactoryOptions{SharedControllerFactory: adapter})
	if err != nil {
		t.Fatal(err)
	}
	appsF, err := apps.NewFactoryFromConfigWithOptions(cfg, &apps.FactoryOptions{SharedControllerFactory: adapter})
	if err != nil {
		t.Fatal(err)
	}
	return &env{ns: ns, adapter: adapter, core: coreF, apps: appsF, kube: controlplanetest.Clientset(cfg)}
}

// start starts the operator the way a wrangler program does, through
// wrangler's factory.
func (e *env) start(t *testing.T) {
	t.Helper()
	if err := e.core.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
