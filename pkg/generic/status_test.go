package generic_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// Services are the built-in kind whose status has standard conditions, so
// they stand in for a custom resource with a status here.
type services = generic.Controller[*corev1.Service, *corev1.ServiceList]

var serviceStatus = generic.StatusAccess[*corev1.Service, corev1.ServiceStatus]{
	Get:        func(s *corev1.Service) corev1.ServiceStatus { return s.Status },
	Set:        func(s *corev1.Service, st corev1.ServiceStatus) { s.Status = st },
	Conditions: func(st *corev1.ServiceStatus) *[]metav1.Condition { return &st.Conditions },
}

const generated = condition.Cond("Generated")

func newServices(t *testing.T, f *generic.Factory) *services {
	t.Helper()
	c, err := generic.NewController[*corev1.Service, *corev1.ServiceList](corev1.SchemeGroupVersion.WithKind("Service"), "services", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createService(t *testing.T, ns, name string, port int32) {
	t.Helper()
	_, err := kube().CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStatusHandlerWritesOnlyOnChange(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	counter := &requestCounter{pathPart: "/services"}
	f := newFactory(t, counter.config(), ns)
	svcs := newServices(t, f)
	var fail atomic.Bool
	fail.Store(true)
	var calls atomic.Int32
	generic.RegisterStatusHandler(t.Context(), svcs, serviceStatus, generated, "status", func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
		calls.Add(1)
		if fail.Load() {
			return st, errors.New("backend not ready")
		}
		return st, nil
	})
	createService(t, ns, "web", 80)
	start(t, f)

	getCond := func() *metav1.Condition {
		svc, err := kube().CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return generated.Get(svc.Status.Conditions)
	}
	eventually(t, "condition False with the error", func() bool {
		c := getCond()
		return c != nil && c.Status == metav1.ConditionFalse && c.Message == "backend not ready"
	})
	fail.Store(false)
	svcs.Enqueue(ns, "web")
	eventually(t, "condition True", func() bool {
		c := getCond()
		return c != nil && c.Status == metav1.ConditionTrue
	})
	// The handler reads the cache: until it holds the write, a round
	// would rightly write True again (and conflict).
	eventually(t, "condition True in the cache", func() bool {
		svc, err := svcs.Cache().Get(ns, "web")
		return err == nil && generated.IsTrue(svc.Status.Conditions)
	})

	// Same result again: no status write.
	puts := counter.count("PUT")
	before := calls.Load()
	svcs.Enqueue(ns, "web")
	eventually(t, "handler ran again", func() bool { return calls.Load() > before })
	svcs.Enqueue(ns, "web")
	eventually(t, "handler ran once more", func() bool { return calls.Load() > before+1 })
	if after := counter.count("PUT"); after != puts {
		t.Fatalf("unchanged status written %d more times", after-puts)
	}
}

func TestGeneratingHandlerCreatesUpdatesPrunesAndCleansUp(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	// Each Service wants one ConfigMap per port, and a Secret while it
	// has the "with-secret" label.
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			var objs []runtime.Object
			for _, p := range svc.Spec.Ports {
				objs = append(objs, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", svc.Name, p.Port)},
					Data:       map[string]string{"port": fmt.Sprint(p.Port)},
				})
			}
			if svc.Labels["with-secret"] == "yes" {
				objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-secret"}})
			}
			return objs, st, nil
		}, nil)
	createService(t, ns, "web", 80)
	start(t, f)

	exists := func(get func() error) func() bool {
		return func() bool { return get() == nil }
	}
	gone := func(get func() error) func() bool {
		return func() bool { return apierrors.IsNotFound(get()) }
	}
	cm := func(name string) func() error {
		return func() error {
			_, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
			return err
		}
	}
	secret := func() error {
		_, err := kube().CoreV1().Secrets(ns).Get(context.Background(), "web-secret", metav1.GetOptions{})
		return err
	}
	eventually(t, "child created", exists(cm("web-80")))
	eventually(t, "Generated condition True", func() bool {
		svc, err := kube().CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
		return err == nil && generated.IsTrue(svc.Status.Conditions)
	})

	// Change the owner: port 80 -> 8080, and a Secret joins the set.
	updateService(t, ns, "web", func(svc *corev1.Service) {
		svc.Spec.Ports[0].Port = 8080
		svc.Labels = map[string]string{"with-secret": "yes"}
	})
	eventually(t, "new child", exists(cm("web-8080")))
	eventually(t, "secret child", exists(secret))
	eventually(t, "old child pruned", gone(cm("web-80")))

	// The Secret kind drops out of the set entirely.
	updateService(t, ns, "web", func(svc *corev1.Service) { svc.Labels = nil })
	eventually(t, "whole kind pruned", gone(secret))

	// The owner goes away: every child goes with it.
	if err := kube().CoreV1().Services(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "children pruned with their owner", gone(cm("web-8080")))
}

func TestGeneratingHandlerDryRun(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "generic-test"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var plans []apply.Plan
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, "", "dry",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-child"}}}, st, nil
		}, &generic.GeneratingHandlerOptions{DryRun: true, Plan: func(key string, p apply.Plan) {
			mu.Lock()
			plans = append(plans, p)
			mu.Unlock()
		}})
	createService(t, ns, "web", 80)
	start(t, f)
	eventually(t, "a plan", func() bool { mu.Lock(); defer mu.Unlock(); return len(plans) > 0 })
	mu.Lock()
	p := plans[0]
	mu.Unlock()
	if len(p.Create) != 1 || p.Create[0].Name != "web-child" {
		t.Fatalf("plan: %+v", p)
	}
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), "web-child", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry run created the child: %v", err)
	}
}

func updateService(t *testing.T, ns, name string, change func(*corev1.Service)) {
	t.Helper()
	for range 10 {
		svc, err := kube().CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(svc)
		if _, err = kube().CoreV1().Services(ns).Update(context.Background(), svc, metav1.UpdateOptions{}); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("too many conflicts updating the service")
}
