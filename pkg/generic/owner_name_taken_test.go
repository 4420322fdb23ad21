package generic_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// An owner deleted for real has its children pruned, even when, by the
// time its deletion is handled, another object of its name exists outside
// the operator's label-filtered cache (created again by someone else,
// without the label). That object is a different owner (another UID,
// DESIGN.md: "an owner created again is a different owner"); the operator
// never handles it, so nothing else will ever prune the deleted owner's
// children. The live read that confirms the owner is gone looked the owner
// up by name only, took the new object for the deleted owner, answered
// ErrOwnerExists, and the children (here without owner references, as
// with NoOwnerReference or cross-namespace children) were left for good.
func TestGeneratingHandlerPrunesForADeletedOwnerWhoseNameWasTakenOutsideTheCache(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const selected = "generating-test/selected"
	f := newFactoryOf(t, cp.Config(), cache.Options{Namespace: ns, LabelSelector: selected + "=yes"}, controller.SharedControllerFactoryOptions{})
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	// Registered first, so it runs before the generating handler in a
	// pass: it holds the deletion's pass until the name is taken again.
	reached, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	svcs.OnChange(t.Context(), "hold-deletion", func(key string, svc *corev1.Service) (*corev1.Service, error) {
		if svc == nil && key == ns+"/web" && held.CompareAndSwap(false, true) {
			close(reached)
			select {
			case <-release:
			case <-t.Context().Done():
			}
		}
		return nil, nil
	})
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child-" + svc.Name}}}, st, nil
		}, &generic.GeneratingHandlerOptions{NoOwnerReference: true})
	var sawGone atomic.Int32
	svcs.OnChange(t.Context(), "watch-gone", func(key string, svc *corev1.Service) (*corev1.Service, error) {
		if svc == nil && key == ns+"/web" {
			sawGone.Add(1)
		}
		return nil, nil
	})
	ctx := context.Background()
	newService := func(labels map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	if _, err := kube().CoreV1().Services(ns).Create(ctx, newService(map[string]string{selected: "yes"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start(t, f)
	childExists := func() bool { return configMapExists(t, ns, "child-web") }
	eventually(t, "the child", childExists)

	if err := kube().CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion's pass", func() bool {
		select {
		case <-reached:
			return true
		default:
			return false
		}
	})
	// Someone else makes a Service of that name, outside the cache.
	if _, err := kube().CoreV1().Services(ns).Create(ctx, newService(nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, "the generating handler handled the deletion", func() bool { return sawGone.Load() > 0 })
	eventually(t, "the deleted owner's child pruned", func() bool { return !childExists() })
}
