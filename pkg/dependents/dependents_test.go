package dependents_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestCreatesInOrderAndSaysWhy: the database's objects are created, the
// StatefulSet after its Secret; the app's Deployment waits, and the
// WebApp's condition says for what, until the StatefulSet is ready; then
// it is created.
func TestCreatesInOrderAndSaysWhy(t *testing.T) {
	d, webapps := start(t)
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "shop", "ordering")

	want := "Deployment shop: waiting for StatefulSet shop-db to be ready: 0/1 replicas ready"
	var last string
	controlplanetest.Eventually(t, wait, "the PENDING reason in the WebApp's status", func() bool {
		if m := readyMessage(t, webapps, ns, "shop"); m != last {
			last = m
			t.Logf("status: %s; summary %+v", m, d.Summary(ns, "shop"))
		}
		return has(last, want)
	})
	for _, kind := range []string{"Secret", "StatefulSet", "Service"} {
		if !exists(t, kind, ns, "shop-db") {
			t.Errorf("%s shop-db does not exist", kind)
		}
	}
	if exists(t, "Deployment", ns, "shop") {
		t.Fatal("the Deployment exists before the database is ready")
	}
	setDBReady(t, ns, "shop-db", 1)
	controlplanetest.Eventually(t, wait, "the Deployment", func() bool { return exists(t, "Deployment", ns, "shop") })
	// The record of a transaction is kept when it ends, which can be
	// just after the API server has the object.
	var created []string
	controlplanetest.Eventually(t, wait, "the Deployment's create recorded", func() bool {
		created = ops(d, kvscheduler.OpCreate)
		return slices.Contains(created, "Deployment shop")
	})
	if !before(created, "Secret shop-db", "StatefulSet shop-db") || !before(created, "StatefulSet shop-db", "Deployment shop") {
		t.Fatalf("created in the order %v, want the Secret, then the StatefulSet, then the Deployment", created)
	}
	controlplanetest.Eventually(t, wait, "the Deployment's readiness in the status", func() bool {
		return has(readyMessage(t, webapps, ns, "shop"), "Deployment shop: not ready: 0/1 replicas available (its controller has not seen generation 1 yet)")
	})
}

// TestDeletesInReverseOrder: the WebApp deleted, its objects go, the
// Deployment before the StatefulSet, the StatefulSet before its Secret.
func TestDeletesInReverseOrder(t *testing.T) {
	d, webapps := start(t)
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "shop", "ordering")
	controlplanetest.Eventually(t, wait, "the StatefulSet", func() bool { return exists(t, "StatefulSet", ns, "shop-db") })
	setDBReady(t, ns, "shop-db", 1)
	controlplanetest.Eventually(t, wait, "the Deployment", func() bool { return exists(t, "Deployment", ns, "shop") })

	if err := webapps.Delete(t.Context(), ns, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "every object gone", func() bool {
		return !exists(t, "Secret", ns, "shop-db") && !exists(t, "StatefulSet", ns, "shop-db") &&
			!exists(t, "Service", ns, "shop-db") && !exists(t, "Deployment", ns, "shop")
	})
	var deleted []string
	controlplanetest.Eventually(t, wait, "the Secret's delete recorded", func() bool {
		deleted = ops(d, kvscheduler.OpDelete)
		return slices.Contains(deleted, "Secret shop-db")
	})
	if !before(deleted, "Deployment shop", "StatefulSet shop-db") || !before(deleted, "StatefulSet shop-db", "Secret shop-db") {
		t.Fatalf("deleted in the order %v, want the Deployment, then the StatefulSet, then the Secret", deleted)
	}
}

// TestDependencyGoesAwayByKind: the database stops being ready. The app
// ordered after it stays; the app that requires it is deleted, and waits
// (its status says for what), and comes back once the database is ready.
func TestDependencyGoesAwayByKind(t *testing.T) {
	d, webapps := start(t)
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "ord", "ordering")
	createApp(t, webapps, ns, "req", "requires")
	for _, app := range []string{"ord", "req"} {
		controlplanetest.Eventually(t, wait, "StatefulSet "+app+"-db", func() bool { return exists(t, "StatefulSet", ns, app+"-db") })
		setDBReady(t, ns, app+"-db", 1)
		controlplanetest.Eventually(t, wait, "Deployment "+app, func() bool { return exists(t, "Deployment", ns, app) })
	}

	setDBReady(t, ns, "req-db", 0)
	setDBReady(t, ns, "ord-db", 0)
	want := "Deployment req: waiting for StatefulSet req-db to be ready: 0/1 replicas ready"
	controlplanetest.Eventually(t, wait, "the requiring app deleted and PENDING", func() bool {
		return !exists(t, "Deployment", ns, "req") && has(readyMessage(t, webapps, ns, "req"), want)
	})
	// The ordering-only app's database went unready first: had it been
	// taken down, it would be by now.
	controlplanetest.Eventually(t, wait, "the ordering-only app's status to see its database unready", func() bool {
		return has(readyMessage(t, webapps, ns, "ord"), "StatefulSet ord-db: not ready: 0/1 replicas ready")
	})
	// The transaction that withdrew the database's readiness marker is the
	// one that would have deleted the app: once it is done, the app must be
	// there.
	marker := "dependents/stack/ready/" + ns + "/ord@" + kubedescriptor.KeyFor(appsv1.SchemeGroupVersion.WithKind("StatefulSet"), ns, "ord-db")
	controlplanetest.Eventually(t, wait, "the database's readiness withdrawn", func() bool {
		st := d.Scheduler().GetValueStatus(marker).State
		return st != kvscheduler.Configured && st != kvscheduler.Pending
	})
	appKey := kubedescriptor.KeyFor(appsv1.SchemeGroupVersion.WithKind("Deployment"), ns, "ord")
	if st := d.Scheduler().GetValueStatus(appKey); st.State != kvscheduler.Configured || !exists(t, "Deployment", ns, "ord") {
		t.Fatalf("the Deployment ordered after its database is %v when the database stopped being ready", st)
	}

	setDBReady(t, ns, "req-db", 1)
	controlplanetest.Eventually(t, wait, "the requiring app back", func() bool { return exists(t, "Deployment", ns, "req") })
}

// TestOwnerDeletedWhileStoppedIsCleanedUp: objects carry no owner
// reference (the garbage collector, which the test's control plane does
// not run, would delete them in any order), so the objects of an owner
// deleted while no replica ran are deleted by the next start's first
// resync; another owner's stay.
func TestOwnerDeletedWhileStoppedIsCleanedUp(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := startCtx(t, ctx)
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "gone", "ordering")
	createApp(t, webapps, ns, "kept", "ordering")
	for _, app := range []string{"gone", "kept"} {
		controlplanetest.Eventually(t, wait, "StatefulSet "+app+"-db", func() bool { return exists(t, "StatefulSet", ns, app+"-db") })
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, webapps = start(t)
	controlplanetest.Eventually(t, wait, "the deleted owner's objects gone", func() bool {
		return !exists(t, "Service", ns, "gone-db") && !exists(t, "StatefulSet", ns, "gone-db") && !exists(t, "Secret", ns, "gone-db")
	})
	for _, kind := range []string{"Secret", "StatefulSet", "Service"} {
		if !exists(t, kind, ns, "kept-db") {
			t.Errorf("%s kept-db of the owner that stays is gone", kind)
		}
	}
}

// TestRequiresAnotherOwner: an app that needs another WebApp waits, and its
// status names it, until every object of that WebApp is ready; then it is
// created, and the WebApp it needed says Ready.
func TestRequiresAnotherOwner(t *testing.T) {
	_, webapps := start(t)
	ns := controlplanetest.Namespace(t, cp.Config())
	app, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "front"},
		Spec: demov1.WebAppSpec{Image: "front:1", Config: map[string]string{"needs": "back"}}})
	if err != nil || app == nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "StatefulSet front-db", func() bool { return exists(t, "StatefulSet", ns, "front-db") })
	setDBReady(t, ns, "front-db", 1)
	want := "Deployment front: waiting for WebApp " + ns + "/back to be ready"
	controlplanetest.Eventually(t, wait, "the other owner named in the status", func() bool {
		return has(readyMessage(t, webapps, ns, "front"), want)
	})
	if exists(t, "Deployment", ns, "front") {
		t.Fatal("the app exists before the WebApp it needs")
	}

	createApp(t, webapps, ns, "back", "ordering")
	controlplanetest.Eventually(t, wait, "StatefulSet back-db", func() bool { return exists(t, "StatefulSet", ns, "back-db") })
	setDBReady(t, ns, "back-db", 1)
	controlplanetest.Eventually(t, wait, "Deployment back", func() bool { return exists(t, "Deployment", ns, "back") })
	if exists(t, "Deployment", ns, "front") {
		t.Fatal("the app exists before every object of the WebApp it needs is ready")
	}
	setAppReady(t, ns, "back")
	controlplanetest.Eventually(t, wait, "the app, once the WebApp it needs is ready", func() bool {
		return exists(t, "Deployment", ns, "front")
	})
	controlplanetest.Eventually(t, wait, "the WebApp it needed Ready", func() bool {
		a, err := webapps.Get(t.Context(), ns, "back", metav1.GetOptions{})
		return err == nil && dependents.DefaultCondition.IsTrue(a.Status.Conditions)
	})
}

// TestDeletedBehindItsBackIsRepaired: an object deleted by someone else is
// created again at once (a scoped repair), not at the next healing, which
// the test turns off.
func TestDeletedBehindItsBackIsRepaired(t *testing.T) {
	_, webapps := startCtx(t, t.Context(), func(o *dependents.Options) {
		cfg := dependents.DefaultEventLoopConfig()
		cfg.EnablePeriodicHealing = false
		o.EventLoop = &cfg
	})
	ns := controlplanetest.Namespace(t, cp.Config())
	createApp(t, webapps, ns, "shop", "ordering")
	controlplanetest.Eventually(t, wait, "Service shop-db", func() bool { return exists(t, "Service", ns, "shop-db") })
	kube := controlplanetest.Clientset(cp.Config())
	svc, err := kube.CoreV1().Services(ns).Get(t.Context(), "shop-db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Services(ns).Delete(t.Context(), "shop-db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the Service created again", func() bool {
		now, err := kube.CoreV1().Services(ns).Get(t.Context(), "shop-db", metav1.GetOptions{})
		return err == nil && now.UID != svc.UID
	})
}
