package dependents_test

import (
	"context"
	"strings"
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

// TestAdv5RestartDuringAnOutageLetsTheLatchGo: docs/dependents.md and
// docs/safety.md promise that RequiresOwnerAvailable is a latch, "met once
// every one of its objects was ready, and from then on while that owner
// exists and its own requirements are met, whatever its objects'
// readiness": an outage of the owner's objects never takes down what
// requires it. The latch lives only in the scheduler's memory: a restart
// during the outage computes a with nothing put before (builder.latch's
// "was" is false), its available marker is not put, and the first resync
// deletes b's ConfigMap, though a exists, its requirements are met and
// nothing but the restart happened.
func TestAdv5RestartDuringAnOutageLetsTheLatchGo(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "b":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"},
				Data: map[string]string{"image": app.Spec.Image}}).RequiresOwnerAvailable(ns, "a")}, nil
		}
		labels := map[string]string{"app": "a-db"}
		return []*dependents.Object{dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a-db"},
			Spec: appsv1.StatefulSetSpec{ServiceName: "a-db", Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, "postgres:17")}})}, nil
	}
	fm := "adv5-latchrestart"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's StatefulSet", func() bool { return exists(t, "StatefulSet", ns, "a-db") })
	setDBReady(t, ns, "a-db", 1)
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is available", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	before := advConfigMap(t, ns, "b-cm")
	setDBReady(t, ns, "a-db", 0) // an outage: the latch holds
	controlplanetest.Eventually(t, wait, "a's condition: the outage seen", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "0/1 replicas ready")
	})
	if now := advConfigMap(t, ns, "b-cm"); now == nil || now.UID != before.UID {
		t.Fatalf("the latch did not hold through the outage before any restart (b-cm now %v)", now)
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	// The first resync's commit is where b's ConfigMap goes, if it goes.
	if now := advConfigMap(t, ns, "b-cm"); now == nil || now.UID != before.UID {
		t.Errorf("a restart during an outage of a (latched available, still existing) deleted b's ConfigMap "+
			"(now %v); a's condition %q, b's %q", now, readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "b"))
	}
}
