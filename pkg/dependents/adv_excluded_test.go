package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdvRequiringAnExcludedObjectSaysWhy: x Requires y, and y is not
// wanted (IncludeWhen(false)): x waits ("what requires it waits"), and
// the owner's condition should say what it waits for and why. It says
// "waiting for core/ConfigMap/<ns>/y to be ready": a raw scheduler key,
// and nothing of y being left out by IncludeWhen, so the user looks for
// an object that is not coming and is told it is merely not ready.
func TestAdvRequiringAnExcludedObjectSaysWhy(t *testing.T) {
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		y := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}).IncludeWhen(false)
		x := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}).Requires(y)
		return []*dependents.Object{y, x}, nil
	}
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv-excluded", cmKind, handler)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", nil)
	var msg string
	controlplanetest.Eventually(t, wait, "x waiting in a's condition", func() bool {
		msg = readyMessage(t, webapps, ns, "a")
		return has(msg, "ConfigMap x: waiting for")
	})
	if !has(msg, "ConfigMap y") || has(msg, "core/ConfigMap/") {
		t.Errorf("x waits for y, which IncludeWhen left out; the condition says: %s", msg)
	}
}
