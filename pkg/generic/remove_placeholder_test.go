package generic_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// An OnRemove handler that returns a placeholder (an object without a UID,
// &corev1.ConfigMap{}, as handlers return for "nothing to pass on") has
// succeeded: its finalizer must go, so that the object is deleted. Lariat's
// handler chain already ignores such placeholders (docs/safety.md: "A
// handler returning an object without a UID does not hide the real
// object"), but OnRemove takes the placeholder's (empty) finalizer list for
// the object's, finds its finalizer "already removed", and leaves it on the
// object: the object stays terminating forever, and nothing is logged or
// retried.
func TestOnRemovePlaceholderReturnStillReleasesTheObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	var calls counter
	cms.OnRemove(context.Background(), "cleanup", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		calls.inc()
		return &corev1.ConfigMap{}, nil
	})
	start(t, f)
	createCM(t, ns, "held")
	fin := generic.FinalizerName("cleanup")
	eventually(t, "the finalizer added", finalizersAre(t, ns, "held", fin))
	if err := kube().CoreV1().ConfigMaps(ns).Delete(context.Background(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the OnRemove handler ran", func() bool { return calls.get() > 0 })
	var last *corev1.ConfigMap
	t.Cleanup(func() {
		if t.Failed() && last != nil {
			t.Logf("still there: finalizers %v, deletionTimestamp %v, handler calls %d", last.Finalizers, last.DeletionTimestamp, calls.get())
		}
	})
	eventually(t, "the object deleted once its OnRemove handler succeeded", func() bool {
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), "held", metav1.GetOptions{})
		if err == nil {
			last = cm
		}
		return gone(ns, "held")()
	})
}
