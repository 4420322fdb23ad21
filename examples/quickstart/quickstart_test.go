package main

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	v1 "github.com/lariat-dev/lariat/examples/quickstart/api/v1"
	"github.com/lariat-dev/lariat/examples/quickstart/generated/controllers/quickstart.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"crds"}}, &cp)
}

// eventually polls check until it returns true, failing the test with the
// last state it reported when ctx ends first.
func eventually(ctx context.Context, t *testing.T, what string, check func() (bool, any)) {
	t.Helper()
	for {
		ok, state := check()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached; last state: %+v", what, state)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestQuickstart runs the operator's handlers against a real API server
// and follows one Greeting through creation, update and deletion.
func TestQuickstart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := controlplanetest.Namespace(t, cp.Config())

	// The operator handles this test's namespace only: other tests of the
	// package share the control plane and run operators of their own.
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := register(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// A second group factory over f is cheap: it shares register's scheme
	// and clients. Its Create, Get, Update and Delete go to the API server.
	qs, err := quickstart.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	greetings, err := qs.Quickstart().V1().Greeting()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)

	created, err := greetings.Create(ctx, &v1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec:       v1.GreetingSpec{Message: "hello, world"},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(message string) {
		t.Helper()
		eventually(ctx, t, "ConfigMap with "+message, func() (bool, any) {
			cm, err := cms.Get(ctx, "hello-greeting", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			owned := len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == created.UID &&
				cm.OwnerReferences[0].Kind == "Greeting"
			return cm.Data["message"] == message && owned, cm
		})
		eventually(ctx, t, "Greeting status", func() (bool, any) {
			g, err := greetings.Get(ctx, ns, "hello", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return ready.IsTrue(g.Status.Conditions) && g.Status.ObservedGeneration == g.Generation &&
				g.Status.ConfigMap == "hello-greeting", g.Status
		})
	}
	waitFor("hello, world")

	// The ConfigMap follows the message. The operator may still be writing
	// the status, hence the retry on conflicts.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g, err := greetings.Get(ctx, ns, "hello", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 {
			t.Errorf("replicas not defaulted by the CRD: %v", g.Spec.Replicas)
		}
		g.Spec.Message = "hello again"
		_, err = greetings.Update(ctx, g)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitFor("hello again")

	// The control plane runs no garbage collector, so the ConfigMap going
	// away shows the generating handler pruned it.
	if err := greetings.Delete(ctx, ns, "hello", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "ConfigMap deleted", func() (bool, any) {
		_, err := cms.Get(ctx, "hello-greeting", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}
