package generic_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// An owner that leaves a label-filtered cache is not deleted: the generating
// handler sees it go, but its children stay while the owner exists. Once the
// owner is back in the cache and then really deleted, its children go.
func TestGeneratingHandlerOwnerLeavingFilteredCacheKeepsChildren(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const selected = "generating-test/selected"
	f := newFactoryOf(t, cp.Config(), cache.Options{Namespace: ns, LabelSelector: selected + "=yes"}, controller.SharedControllerFactoryOptions{})
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child-" + svc.Name}}}, st, nil
		}, nil)
	// Runs after the generating handler for the same key, so once it has
	// seen the owner go, the generating handler has too.
	var sawGone atomic.Int32
	svcs.OnChange(t.Context(), "watch-gone", func(key string, svc *corev1.Service) (*corev1.Service, error) {
		if svc == nil {
			sawGone.Add(1)
		}
		return nil, nil
	})
	ctx := context.Background()
	_, err := kube().CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{selected: "yes"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start(t, f)
	childExists := func() bool { return configMapExists(t, ns, "child-web") }
	eventually(t, "the child", childExists)

	setLabel := func(value string) {
		patch := `{"metadata":{"labels":{"` + selected + `":"` + value + `"}}}`
		if _, err := kube().CoreV1().Services(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLabel("no")
	eventually(t, "the owner leaving the cache", func() bool { return sawGone.Load() > 0 })
	if !childExists() {
		t.Fatal("the child was pruned when its live owner left the label-filtered cache")
	}

	// Back in the cache, then deleted for real: the children go.
	setLabel("yes")
	eventually(t, "the owner back in the cache", func() bool {
		_, err := svcs.Cache().Get(ns, "web")
		return err == nil
	})
	before := sawGone.Load()
	if err := kube().CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion seen", func() bool { return sawGone.Load() > before })
	eventually(t, "the child of the deleted owner pruned", func() bool { return !childExists() })
}
