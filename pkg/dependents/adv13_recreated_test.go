package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv13OwnerRecreatedWhileItsObjectsWait: WebApp a's ConfigMap (named
// by its config) RequiresOwner b, absent, so it waits. a is deleted and
// created again under its name (a new UID) wanting another ConfigMap,
// while the first still waits, with the worker held so that the loop
// sees one change from the old a to the new. Once b is ready, only the
// new a's ConfigMap is created, naming the new UID, and a is Ready.
func TestAdv13OwnerRecreatedWhileItsObjectsWait(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	gate := newAdvGate(t)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if app.Name == "a" {
			gate.hold()
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"]},
			Data: map[string]string{"uid": string(app.UID)}})
		if r := app.Spec.Config["requires"]; r != "" {
			cm.RequiresOwner(ns, r)
		}
		return []*dependents.Object{cm}, nil
	}
	_, webapps := advStart(t, t.Context(), "adv13-recreated", adv13CMKind, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "old", "requires": "b"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap waiting for b", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "waiting for WebApp "+ns+"/b")
	})
	fresh := advRecreateWhileHeld(t, webapps, gate, ns, "a", map[string]string{"cm": "new", "requires": "b"})
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "b-cm"})
	controlplanetest.Eventually(t, wait, "the new a Ready with its ConfigMap", func() bool {
		cm := advConfigMap(t, ns, "new")
		return cm != nil && adv13Ready(t, webapps, ns, "a")
	})
	if cm := advConfigMap(t, ns, "new"); cm.Data["uid"] != string(fresh.UID) ||
		!has(cm.Annotations[dependents.AnnotationOwner], string(fresh.UID)) {
		t.Errorf("the new a's ConfigMap does not name the new UID %s: data %v, annotations %v", fresh.UID, cm.Data, cm.Annotations)
	}
	if advConfigMap(t, ns, "old") != nil {
		t.Error("the deleted a's ConfigMap, still waiting when it went, was created")
	}
}
