package dependents_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestFailingOwnersObjectNotReadyTakesItsMarkerDown: an owner whose
// handler fails keeps its objects as last desired, judged again (docs:
// "its last desired objects, judged again"). a's StatefulSet is ready and
// b's ConfigMap RequiresOwner a; then a's handler fails, and a's
// StatefulSet goes not ready: a is not ready, so b's ConfigMap goes, as
// it does while a's handler answers.
func TestFailingOwnersObjectNotReadyTakesItsMarkerDown(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"}}).
				RequiresOwner(ns, "a")}, nil
		case failing.Load():
			return nil, errors.New("cannot compute a")
		}
		labels := map[string]string{"app": "a-db"}
		return []*dependents.Object{dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a-db"},
			Spec: appsv1.StatefulSetSpec{ServiceName: "a-db", Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, "postgres:17")}})}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet")}
	_, webapps := advStart(t, t.Context(), "failing-notready", kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's StatefulSet", func() bool { return exists(t, "StatefulSet", ns, "a-db") })
	setDBReady(t, ns, "a-db", 1)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is ready", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	failing.Store(true)
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's condition: its handler failed", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "cannot compute a")
	})
	setDBReady(t, ns, "a-db", 0)
	controlplanetest.Eventually(t, wait, "a's condition: the outage seen", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "0/1 replicas ready")
	})
	controlplanetest.Eventually(t, wait, "b's ConfigMap deleted: a is not ready", func() bool {
		return advConfigMap(t, ns, "b-cm") == nil
	})
}
