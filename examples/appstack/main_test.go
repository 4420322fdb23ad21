package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../../crds"}}, &cp)
}

const wait = dependentstest.Wait

// TestAppStack follows one WebApp's stack: created in order, the app
// PENDING (and its status saying why) until the database is ready, the
// Secret withdrawn under the ordering-only StatefulSet (which stays), the
// database unready under the requiring app (which goes), and everything
// deleted in reverse order with the WebApp.
func TestAppStack(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := register(ctx, f, controlplanetest.QuietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if err := d.Wait(c); err != nil {
			t.Error(err)
		}
	})
	kube := controlplanetest.Clientset(cp.Config())
	app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: demov1.WebAppSpec{Image: "shop:1", Config: map[string]string{"dbPassword": "s3cret"}}}
	df, err := demo.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	c, err := df.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	want := "Deployment shop: waiting for StatefulSet shop-db to be ready: 0/1 replicas ready"
	controlplanetest.Eventually(t, wait, "the PENDING reason in the status", func() bool {
		return strings.Contains(dependentstest.ReadyMessage(ctx, c, ns, "shop"), want)
	})
	if dependentstest.Exists(ctx, kube, "Deployment", ns, "shop") {
		t.Fatal("the app exists before its database is ready")
	}
	dependentstest.SetStatefulSetReady(t, kube, ns, "shop-db", 1)
	controlplanetest.Eventually(t, wait, "the app", func() bool { return dependentstest.Exists(ctx, kube, "Deployment", ns, "shop") })
	// A transaction's record is kept when it ends, which can be just after
	// the API server has the object.
	dependentstest.Recorded(t, d, kvscheduler.OpCreate, "Deployment shop")
	if got := dependentstest.Ops(d, kvscheduler.OpCreate); !dependentstest.InOrder(got, "Secret shop-db", "StatefulSet shop-db", "Deployment shop") {
		t.Fatalf("created %v", got)
	}

	// Ordering only: the Secret withdrawn, the StatefulSet stays.
	setConfig(t, c, ns, map[string]string{})
	controlplanetest.Eventually(t, wait, "the Secret withdrawn", func() bool { return !dependentstest.Exists(ctx, kube, "Secret", ns, "shop-db") })
	if !dependentstest.Exists(ctx, kube, "StatefulSet", ns, "shop-db") || !dependentstest.Exists(ctx, kube, "Deployment", ns, "shop") {
		t.Fatal("the database or the app went with the Secret")
	}
	// Requires: the database unready, the app goes and waits.
	dependentstest.SetStatefulSetReady(t, kube, ns, "shop-db", 0)
	controlplanetest.Eventually(t, wait, "the app withdrawn and PENDING", func() bool {
		return !dependentstest.Exists(ctx, kube, "Deployment", ns, "shop") && strings.Contains(dependentstest.ReadyMessage(ctx, c, ns, "shop"), want)
	})
	dependentstest.SetStatefulSetReady(t, kube, ns, "shop-db", 1)
	controlplanetest.Eventually(t, wait, "the app back", func() bool { return dependentstest.Exists(ctx, kube, "Deployment", ns, "shop") })

	if err := c.Delete(ctx, ns, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the stack gone", func() bool {
		return !dependentstest.Exists(ctx, kube, "StatefulSet", ns, "shop-db") && !dependentstest.Exists(ctx, kube, "Service", ns, "shop-db") &&
			!dependentstest.Exists(ctx, kube, "Deployment", ns, "shop")
	})
	dependentstest.Recorded(t, d, kvscheduler.OpDelete, "StatefulSet shop-db")
	dependentstest.Recorded(t, d, kvscheduler.OpDelete, "Service shop-db")
	if got := dependentstest.Ops(d, kvscheduler.OpDelete); !dependentstest.InOrder(got, "Deployment shop", "StatefulSet shop-db") ||
		!dependentstest.InOrder(got, "Deployment shop", "Service shop-db") {
		t.Fatalf("deleted %v, want the app before the database", got)
	}
}

// setConfig sets the WebApp's config.
func setConfig(t *testing.T, c democtl.WebAppController, ns string, config map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := c.Get(t.Context(), ns, "shop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config = config
		_, err = c.Update(t.Context(), app)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
