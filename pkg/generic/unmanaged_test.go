package generic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// newFactoryWithMetrics is newFactory whose controllers record their
// metrics in reg.
func newFactoryWithMetrics(t *testing.T, ns string, reg prometheus.Registerer) *generic.Factory {
	t.Helper()
	return newFactoryOf(t, cp.Config(), cache.Options{Namespace: ns}, controller.SharedControllerFactoryOptions{Registerer: reg})
}

// counterValue is the value of the counter name with the label gvk, 0 when
// it has not been recorded.
func counterValue(t *testing.T, reg *prometheus.Registry, name, gvk string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "gvk" && lp.GetValue() == gvk {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// A generating handler whose desired child exists unmanaged (made by hand)
// does not take it over: the owner's condition is False with the refusal's
// message, the child is left as it is and survives the owner's deletion,
// the handler's other child is applied (and pruned with the owner), and the
// key backs off: after the condition is written, passes are retries of the
// rate limiter (lariat_queue_retries_total), which write nothing (the
// owner's resourceVersion stays), not a loop of status writes each
// starting the next pass. A handler whose SetOptions.AdoptKinds lists the
// kind takes such a child over, and prunes it with its owner. The
// unmanaged children are a ConfigMap and, as in issue 26, a Namespace made
// by hand with a ConfigMap in it.
func TestGeneratingHandlerRefusesAnUnmanagedChild(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	f := newFactoryWithMetrics(t, ns, reg)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	var runs counter
	// The case: a Namespace made by hand, holding a ConfigMap,
	// that a generating handler names.
	handNS := "hm-" + ns
	madeNS, err := kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: handNS}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube().CoreV1().Namespaces().Delete(context.Background(), handNS, metav1.DeleteOptions{}) })
	createCM(t, handNS, "content")
	generic.RegisterGeneratingHandler(ctx, svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			if svc.Name != "owner" {
				return nil, st, nil
			}
			runs.inc()
			return []runtime.Object{
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "handmade"}, Data: map[string]string{"v": "handler"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: handNS}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Data: map[string]string{"v": "handler"}},
			}, st, nil
		}, &generic.GeneratingHandlerOptions{AllowClusterScoped: true})
	const adopted = condition.Cond("Adopted")
	generic.RegisterGeneratingHandler(ctx, svcs, applier, serviceStatus, adopted, "adopting",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			if svc.Name != "adopter" {
				return nil, st, nil
			}
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "adoptme"}, Data: map[string]string{"v": "handler"}}}, st, nil
		}, &generic.GeneratingHandlerOptions{Set: generic.SetOptions{AdoptKinds: []schema.GroupKind{{Kind: "ConfigMap"}}}})
	made := createCM(t, ns, "handmade")
	createCM(t, ns, "adoptme")
	createService(t, ns, "owner", 80)
	createService(t, ns, "adopter", 80)
	start(t, f)

	var refused *corev1.Service
	eventually(t, "the owner's condition False with the refusal", func() bool {
		refused = getService(t, ns, "owner")
		c := generated.Get(refused.Status.Conditions)
		// The other handler's condition too: its first write is not a
		// retry's.
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "handmade exists and belongs to no set") &&
			strings.Contains(c.Message, "Namespace "+handNS+" exists and belongs to no set") &&
			strings.Contains(c.Message, apply.LabelAdopt+"=true") && adopted.IsTrue(refused.Status.Conditions)
	})
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "own", metav1.GetOptions{}); err != nil {
		t.Fatalf("the handler's other child was not applied: %v", err)
	}
	if got := getCM(t, ns, "handmade"); got.ResourceVersion != made.ResourceVersion || got.Labels[apply.LabelSet] != "" {
		t.Fatalf("the unmanaged child was written to: %+v", got.ObjectMeta)
	}

	// Backoff, not a hot loop: a few retries later the owner's status has
	// not been written again, and every pass since was such a retry (one
	// pass of the status write's own watch event, and one in flight at
	// each reading, aside).
	gvk := controller.KindLabel(corev1.SchemeGroupVersion.WithKind("Service"))
	retries0, runs0 := counterValue(t, reg, "lariat_queue_retries_total", gvk), runs.get()
	eventually(t, "three more retries", func() bool {
		return counterValue(t, reg, "lariat_queue_retries_total", gvk) >= retries0+3
	})
	retried, ran := counterValue(t, reg, "lariat_queue_retries_total", gvk)-retries0, runs.get()-runs0
	if now := getService(t, ns, "owner"); now.ResourceVersion != refused.ResourceVersion {
		t.Errorf("the refused owner's status was written again on a retry: resourceVersion %s → %s", refused.ResourceVersion, now.ResourceVersion)
	}
	if float64(ran) > retried+2 {
		t.Errorf("the handler ran %d times over %v retries: passes that are not backed-off retries", ran, retried)
	}

	eventually(t, "the adopting handler took its child over", func() bool {
		cm := getCM(t, ns, "adoptme")
		return cm.Labels[apply.LabelSet] != "" && cm.Data["v"] == "handler" && adopted.IsTrue(getService(t, ns, "adopter").Status.Conditions)
	})
	for _, name := range []string{"owner", "adopter"} {
		if err := kube().CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the owners' children pruned", func() bool {
		_, e1 := kube().CoreV1().ConfigMaps(ns).Get(ctx, "own", metav1.GetOptions{})
		_, e2 := kube().CoreV1().ConfigMaps(ns).Get(ctx, "adoptme", metav1.GetOptions{})
		return apierrors.IsNotFound(e1) && apierrors.IsNotFound(e2)
	})
	if got := getCM(t, ns, "handmade"); got.ResourceVersion != made.ResourceVersion {
		t.Fatalf("the unmanaged child was written to after its owner went: %+v", got.ObjectMeta)
	}
	gotNS, err := kube().CoreV1().Namespaces().Get(ctx, handNS, metav1.GetOptions{})
	if err != nil || gotNS.ResourceVersion != madeNS.ResourceVersion || gotNS.DeletionTimestamp != nil {
		t.Fatalf("the hand-made Namespace was written to or deleted with the owner: %v %+v", err, gotNS.ObjectMeta)
	}
	getCM(t, handNS, "content")
}
