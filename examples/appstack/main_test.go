package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../../crds"}}, &cp)
}

const wait = time.Minute // guards against hangs only

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
		return strings.Contains(readyMessage(ctx, c, ns), want)
	})
	if exists(ctx, kube, "Deployment", ns, "shop") {
		t.Fatal("the app exists before its database is ready")
	}
	setReady(t, kube, ns, 1)
	controlplanetest.Eventually(t, wait, "the app", func() bool { return exists(ctx, kube, "Deployment", ns, "shop") })
	// A transaction's record is kept when it ends, which can be just after
	// the API server has the object.
	recorded(t, d, kvscheduler.OpCreate, "Deployment shop")
	if got := ops(d, kvscheduler.OpCreate); !inOrder(got, "Secret shop-db", "StatefulSet shop-db", "Deployment shop") {
		t.Fatalf("created %v", got)
	}

	// Ordering only: the Secret withdrawn, the StatefulSet stays.
	setConfig(t, c, ns, map[string]string{})
	controlplanetest.Eventually(t, wait, "the Secret withdrawn", func() bool { return !exists(ctx, kube, "Secret", ns, "shop-db") })
	if !exists(ctx, kube, "StatefulSet", ns, "shop-db") || !exists(ctx, kube, "Deployment", ns, "shop") {
		t.Fatal("the database or the app went with the Secret")
	}
	// Requires: the database unready, the app goes and waits.
	setReady(t, kube, ns, 0)
	controlplanetest.Eventually(t, wait, "the app withdrawn and PENDING", func() bool {
		return !exists(ctx, kube, "Deployment", ns, "shop") && strings.Contains(readyMessage(ctx, c, ns), want)
	})
	setReady(t, kube, ns, 1)
	controlplanetest.Eventually(t, wait, "the app back", func() bool { return exists(ctx, kube, "Deployment", ns, "shop") })

	if err := c.Delete(ctx, ns, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the stack gone", func() bool {
		return !exists(ctx, kube, "StatefulSet", ns, "shop-db") && !exists(ctx, kube, "Service", ns, "shop-db") &&
			!exists(ctx, kube, "Deployment", ns, "shop")
	})
	recorded(t, d, kvscheduler.OpDelete, "StatefulSet shop-db")
	recorded(t, d, kvscheduler.OpDelete, "Service shop-db")
	if got := ops(d, kvscheduler.OpDelete); !inOrder(got, "Deployment shop", "StatefulSet shop-db") ||
		!inOrder(got, "Deployment shop", "Service shop-db") {
		t.Fatalf("deleted %v, want the app before the database", got)
	}
}

func readyMessage(ctx context.Context, c democtl.WebAppController, ns string) string {
	app, err := c.Get(ctx, ns, "shop", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if cond := dependents.DefaultCondition.Get(app.Status.Conditions); cond != nil {
		return cond.Message
	}
	return ""
}

// setReady writes the StatefulSet's status as its controller would.
func setReady(t *testing.T, kube *kubernetes.Clientset, ns string, ready int32) {
	t.Helper()
	// The operator may be writing the StatefulSet meanwhile (its ordering
	// annotation changes when the Secret is withdrawn): a conflict is read
	// again, as the StatefulSet controller would.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sts, err := kube.AppsV1().StatefulSets(ns).Get(t.Context(), "shop-db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		sts.Status.ObservedGeneration, sts.Status.Replicas, sts.Status.ReadyReplicas = sts.Generation, 1, ready
		_, err = kube.AppsV1().StatefulSets(ns).UpdateStatus(t.Context(), sts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func exists(ctx context.Context, kube *kubernetes.Clientset, kind, ns, name string) bool {
	var err error
	switch kind {
	case "Secret":
		_, err = kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	case "Service":
		_, err = kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	case "StatefulSet":
		_, err = kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	case "Deployment":
		_, err = kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return err == nil
}

// ops lists the scheduler's executed creates or deletes of objects, as
// "Kind name", in the order they ran.
func ops(d *dependents.Dependents, op kvscheduler.Operation) []string {
	var out []string
	for _, rec := range d.Scheduler().TransactionHistory(time.Time{}, time.Time{}) {
		for _, o := range rec.Executed {
			if ref, err := kubedescriptor.ParseKey(o.Key); err == nil && o.Operation == op && !o.NOOP && o.Err == nil {
				out = append(out, ref.Kind+" "+ref.Name)
			}
		}
	}
	return out
}

// recorded waits until the scheduler's history has op on obj ("Kind name").
func recorded(t *testing.T, d *dependents.Dependents, op kvscheduler.Operation, obj string) {
	t.Helper()
	controlplanetest.Eventually(t, wait, op.String()+" "+obj+" recorded", func() bool {
		return slices.Contains(ops(d, op), obj)
	})
}

// inOrder tells whether the items appear in list in this order.
func inOrder(list []string, items ...string) bool {
	last := -1
	for _, it := range items {
		i := slices.Index(list, it)
		if i <= last {
			return false
		}
		last = i
	}
	return true
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
