package generic_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// The tests in this file check what a status or generating handler's error
// does to the stored status. Services stand in for a custom resource: their
// status has a field of its own (loadBalancer) and standard conditions,
// which the API server validates (message at most 32 KiB).

const otherCond = condition.Cond("Other")

// since is the lastTransitionTime the tests give conditions, so that a moved
// one is visible.
var since = metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))

// createServiceWithStatus creates a LoadBalancer Service (loadBalancer.ingress
// needs that type) with an ingress, the Other condition and, when gen is
// not nil, the Generated condition as a successful handler leaves it.
func createServiceWithStatus(t *testing.T, ns, name string, gen *metav1.ConditionStatus) *corev1.Service {
	t.Helper()
	ctx := context.Background()
	svc, err := kube().CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	svc.Status.Conditions = []metav1.Condition{{
		Type: string(otherCond), Status: metav1.ConditionTrue, Reason: "Fine", Message: "set by someone else",
		ObservedGeneration: svc.Generation, LastTransitionTime: since,
	}}
	if gen != nil {
		svc.Status.Conditions = append(svc.Status.Conditions, metav1.Condition{
			Type: string(generated), Status: *gen, Reason: condition.ReasonSucceeded,
			ObservedGeneration: svc.Generation, LastTransitionTime: since,
		})
	}
	svc, err = kube().CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func getService(t *testing.T, ns, name string) *corev1.Service {
	t.Helper()
	svc, err := kube().CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// assertStoredStatusKept fails unless the ingress and the Other condition
// that createServiceWithStatus stored are still there, unchanged.
func assertStoredStatusKept(t *testing.T, svc *corev1.Service) {
	t.Helper()
	if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != "192.0.2.10" {
		t.Errorf("loadBalancer.ingress not kept: %+v", ing)
	}
	other := otherCond.Get(svc.Status.Conditions)
	if other == nil || other.Status != metav1.ConditionTrue || other.Message != "set by someone else" || !other.LastTransitionTime.Equal(&since) {
		t.Errorf("condition Other not kept: %+v", other)
	}
}

// watchGenerated records every state of the Generated condition that the API
// server stores for the Service until the test ends.
func watchGenerated(t *testing.T, ns, name string) func() []metav1.Condition {
	t.Helper()
	w, err := kube().CoreV1().Services(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []metav1.Condition
	go func() {
		for ev := range w.ResultChan() {
			svc, ok := ev.Object.(*corev1.Service)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if c := generated.Get(svc.Status.Conditions); c != nil {
				mu.Lock()
				seen = append(seen, *c)
				mu.Unlock()
			}
		}
	}()
	return func() []metav1.Condition {
		mu.Lock()
		defer mu.Unlock()
		return append([]metav1.Condition(nil), seen...)
	}
}

func TestFailingStatusHandlerKeepsStoredStatus(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	createServiceWithStatus(t, ns, "web", nil)
	generic.RegisterStatusHandler(t.Context(), svcs, serviceStatus, generated, "status", func(*corev1.Service, corev1.ServiceStatus) (corev1.ServiceStatus, error) {
		// The common way to fail: the zero status and the error.
		return corev1.ServiceStatus{}, errors.New("backend down")
	})
	start(t, f)
	eventually(t, "condition False with the error", func() bool {
		return generated.IsFalse(getService(t, ns, "web").Status.Conditions)
	})
	svc := getService(t, ns, "web")
	if msg := generated.Message(svc.Status.Conditions); msg != "backend down" {
		t.Errorf("message %q, want the handler's error", msg)
	}
	assertStoredStatusKept(t, svc)
}

func TestFailingGeneratingHandlerKeepsStoredStatus(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	const planned = condition.Cond("Planned")
	// "handler" fails itself; "apply" succeeds but returns a child the API
	// server rejects (an invalid name): in both cases the status it
	// computed (Planned True, no ingress) must not be written.
	createServiceWithStatus(t, ns, "handler", nil)
	createServiceWithStatus(t, ns, "apply", nil)
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			st.LoadBalancer = corev1.LoadBalancerStatus{}
			planned.True(&st.Conditions, svc.Generation, "", "")
			if svc.Name == "handler" {
				return nil, st, errors.New("cannot plan")
			}
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Valid_Name"}}}, st, nil
		}, nil)
	start(t, f)
	for name, want := range map[string]string{"handler": "cannot plan", "apply": "Not_A_Valid_Name"} {
		eventually(t, name+": condition False", func() bool {
			return generated.IsFalse(getService(t, ns, name).Status.Conditions)
		})
		svc := getService(t, ns, name)
		if msg := generated.Message(svc.Status.Conditions); !strings.Contains(msg, want) {
			t.Errorf("%s: message %q, want it to contain %q", name, msg, want)
		}
		if c := planned.Get(svc.Status.Conditions); c != nil {
			t.Errorf("%s: the failing handler's status was written: %+v", name, c)
		}
		assertStoredStatusKept(t, svc)
	}
}

func TestConflictLeavesConditionAndStatusAlone(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	counter := &requestCounter{pathPart: "/services"}
	f := newFactory(t, counter.config(), ns)
	svcs := newServices(t, f)
	createServiceWithStatus(t, ns, "web", new(metav1.ConditionTrue))
	states := watchGenerated(t, ns, "web")
	var calls, after atomic.Int32
	generic.RegisterStatusHandler(t.Context(), svcs, serviceStatus, generated, "status", func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
		if calls.Add(1) <= 2 {
			// As a handler sees it when its own update of another object
			// lost a race: routine, retried.
			return corev1.ServiceStatus{}, apierrors.NewConflict(corev1.Resource("services"), svc.Name, errors.New("the object has been modified"))
		}
		return st, nil
	})
	// Runs after the status handler, so when it has seen three rounds the
	// third round's status write (if any) is done.
	svcs.OnChange(t.Context(), "after", func(string, *corev1.Service) (*corev1.Service, error) {
		after.Add(1)
		return nil, nil
	})
	start(t, f)
	eventually(t, "three rounds: two conflicts and a success", func() bool { return calls.Load() >= 3 && after.Load() >= 3 })
	if puts := counter.count("PUT"); puts != 0 {
		t.Errorf("%d status writes for conflicts and an unchanged status, want none", puts)
	}
	svc := getService(t, ns, "web")
	c := generated.Get(svc.Status.Conditions)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&since) {
		t.Errorf("Generated after the conflicts: %+v, want True since %s", c, since)
	}
	for _, s := range states() {
		if s.Status != metav1.ConditionTrue {
			t.Errorf("Generated flapped to %s (%q)", s.Status, s.Message)
		}
	}
	assertStoredStatusKept(t, svc)
}

// A real conflict: the object changes between the handler's read and its
// status write. The write fails, the key is retried with the new object,
// and the condition never says anything but True.
func TestStatusWriteConflictIsRetried(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	createServiceWithStatus(t, ns, "web", new(metav1.ConditionTrue))
	states := watchGenerated(t, ns, "web")
	var calls atomic.Int32
	generic.RegisterStatusHandler(t.Context(), svcs, serviceStatus, generated, "status", func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
		if calls.Add(1) == 1 {
			bumped := svc.DeepCopy()
			bumped.Labels = map[string]string{"bumped": "yes"}
			if _, err := kube().CoreV1().Services(ns).Update(context.Background(), bumped, metav1.UpdateOptions{}); err != nil {
				t.Errorf("bump the service: %v", err)
			}
		}
		st.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.20"}}
		return st, nil
	})
	start(t, f)
	eventually(t, "the new ingress written", func() bool {
		ing := getService(t, ns, "web").Status.LoadBalancer.Ingress
		return len(ing) == 1 && ing[0].IP == "192.0.2.20"
	})
	if n := calls.Load(); n < 2 {
		t.Fatalf("handler ran %d times: the write did not conflict, the test proves nothing", n)
	}
	c := generated.Get(getService(t, ns, "web").Status.Conditions)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&since) {
		t.Errorf("Generated after the conflict: %+v, want True since %s", c, since)
	}
	for _, s := range states() {
		if s.Status != metav1.ConditionTrue {
			t.Errorf("Generated flapped to %s (%q)", s.Status, s.Message)
		}
	}
}

// widgetStatus is the status of the test kind Widget, read from and written
// to its unstructured objects.
type widgetStatus struct {
	Ready      bool               `json:"ready,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

func widgetStatusAccess(t *testing.T) generic.StatusAccess[*unstructured.Unstructured, widgetStatus] {
	return generic.StatusAccess[*unstructured.Unstructured, widgetStatus]{
		Get: func(u *unstructured.Unstructured) widgetStatus {
			var st widgetStatus
			m, _, err := unstructured.NestedMap(u.Object, "status")
			if err == nil {
				err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st)
			}
			if err != nil {
				t.Errorf("read the status of %s: %v", u.GetName(), err)
			}
			return st
		},
		Set: func(u *unstructured.Unstructured, st widgetStatus) {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
			if err != nil {
				t.Errorf("write the status of %s: %v", u.GetName(), err)
			}
			u.Object["status"] = m
		},
		Conditions: func(st *widgetStatus) *[]metav1.Condition { return &st.Conditions },
	}
}

// A handler error longer than the API server accepts in a condition message
// (32 KiB for a CRD with metav1.Condition's schema) must not make every
// status write fail: the message is cut, on a UTF-8 boundary, and marked.
func TestHugeErrorMessageIsTruncatedInTheCondition(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	widgets, err := generic.NewController[*unstructured.Unstructured, *unstructured.UnstructuredList](testkinds.WidgetGVK, "widgets", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	access := widgetStatusAccess(t)
	w, err := widgets.Create(t.Context(), testkinds.Widget(ns, "w", 1))
	if err != nil {
		t.Fatal(err)
	}
	access.Set(w, widgetStatus{Ready: true})
	if _, err := widgets.UpdateStatus(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	// 100 KiB of two-byte runes: a cut at an odd byte splits one.
	huge := strings.Repeat("é", 50*1024)
	generic.RegisterStatusHandler(t.Context(), widgets, access, generated, "status", func(*unstructured.Unstructured, widgetStatus) (widgetStatus, error) {
		return widgetStatus{}, errors.New(huge)
	})
	start(t, f)
	var st widgetStatus
	eventually(t, "condition False", func() bool {
		w, err := widgets.Get(t.Context(), ns, "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st = access.Get(w)
		return generated.IsFalse(st.Conditions)
	})
	msg := generated.Message(st.Conditions)
	if len(msg) > condition.MaxMessageLength || !utf8.ValidString(msg) {
		t.Errorf("message of %d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
	}
	body, ok := strings.CutSuffix(msg, condition.TruncatedMarker)
	if !ok || !strings.HasPrefix(huge, body) || len(body) < condition.MaxMessageLength-len(condition.TruncatedMarker)-utf8.UTFMax {
		t.Errorf("message is not a marked prefix of the error: %d bytes, ends %q", len(msg), msg[max(0, len(msg)-40):])
	}
	if !st.Ready {
		t.Error("the stored status (ready) was not kept")
	}
}
