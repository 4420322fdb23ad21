// Package dependentstest holds what the tests of pkg/dependents and of the
// examples built on it share: registering a handler for WebApps against a
// real API server, reading what exists and what the scheduler did, and
// writing the statuses the controllers Lariat's control plane lacks would.
package dependentstest

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Wait bounds the waits for what the API server and the informers reach
// in their own time; it only guards against hangs.
const Wait = time.Minute

// WebAppStatus reaches a WebApp's status (the generated access is
// unexported).
func WebAppStatus() generic.StatusAccess[*demov1.WebApp, demov1.WebAppStatus] {
	return generic.StatusAccess[*demov1.WebApp, demov1.WebAppStatus]{
		Get:                func(o *demov1.WebApp) demov1.WebAppStatus { return o.Status },
		Set:                func(o *demov1.WebApp, s demov1.WebAppStatus) { o.Status = s },
		Conditions:         func(s *demov1.WebAppStatus) *[]metav1.Condition { return &s.Conditions },
		ObservedGeneration: func(s *demov1.WebAppStatus) *int64 { return &s.ObservedGeneration },
	}
}

// Start builds a factory on cfg (with fopts), registers handler for
// WebApps under name with opts, and starts the factory, until ctx ends;
// the test's cleanup waits for the registration to stop.
func Start(t testing.TB, ctx context.Context, cfg *rest.Config, fopts *generic.FactoryOptions, name string,
	handler dependents.Handler[*demov1.WebApp], opts dependents.Options) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	f, webapps := Factory(t, cfg, fopts)
	d, err := dependents.Register(ctx, f, webapps, WebAppStatus(), name, handler, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Wait)
		defer cancel()
		if err := d.Wait(waitCtx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	return d, webapps
}

// Factory builds a factory on cfg (with fopts) and its WebApp controller,
// for a test that calls dependents.Register itself.
func Factory(t testing.TB, cfg *rest.Config, fopts *generic.FactoryOptions) (*generic.Factory, democtl.WebAppController) {
	t.Helper()
	f, err := generic.NewFactoryFromConfig(cfg, nil, fopts)
	if err != nil {
		t.Fatal(err)
	}
	df, err := demo.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	webapps, err := df.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	return f, webapps
}

// ReadyMessage returns the message of the WebApp's DefaultCondition, ""
// while it has none (or the WebApp cannot be read).
func ReadyMessage(ctx context.Context, c democtl.WebAppController, ns, name string) string {
	app, err := c.Get(ctx, ns, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if cond := dependents.DefaultCondition.Get(app.Status.Conditions); cond != nil {
		return cond.Message
	}
	return ""
}

// SetStatefulSetReady writes the StatefulSet's status as its controller
// would: ready of 1 replica. A conflict (the operator writing the
// StatefulSet meanwhile) is read again, as the controller would.
func SetStatefulSetReady(t testing.TB, kube kubernetes.Interface, ns, name string, ready int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sts, err := kube.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sts.Status.ObservedGeneration, sts.Status.Replicas, sts.Status.ReadyReplicas = sts.Generation, 1, ready
		_, err = kube.AppsV1().StatefulSets(ns).UpdateStatus(context.Background(), sts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SetDeploymentReady writes the Deployment's status as its controller
// would: 1 of 1 replica available.
func SetDeploymentReady(t testing.TB, kube kubernetes.Interface, ns, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Status.ObservedGeneration, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas = d.Generation, 1, 1, 1
		_, err = kube.AppsV1().Deployments(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Exists tells whether the object of kind (Secret, Service, StatefulSet,
// Deployment) at ns/name is on the server.
func Exists(ctx context.Context, kube kubernetes.Interface, kind, ns, name string) bool {
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
	default:
		return false
	}
	return err == nil
}

// Ops lists the scheduler's executed creates or deletes (op) of objects,
// not markers, so far, as "Kind name", in the order they ran.
func Ops(d *dependents.Dependents, op kvscheduler.Operation) []string {
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

// Recorded waits until the scheduler's history has op on obj ("Kind
// name"): a transaction's record is kept when it ends, which can be just
// after the API server has the object.
func Recorded(t testing.TB, d *dependents.Dependents, op kvscheduler.Operation, obj string) {
	t.Helper()
	controlplanetest.Eventually(t, Wait, op.String()+" "+obj+" recorded", func() bool {
		return slices.Contains(Ops(d, op), obj)
	})
}

// InOrder tells whether the items appear in list, in this order.
func InOrder(list []string, items ...string) bool {
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
