package dependents_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdvOwnerRecreatedWhileStoppedInheritsTheOldObjects: docs/safety.md
// says "the objects of an owner deleted while no replica ran are deleted
// by the next start's first resync". Deleted and created again under the
// same name (another UID) while the operator was stopped, the owner is
// not the same object, and its objects carry the old owner's UID in
// lariat.dev/dependents-owner; the first resync deletes nothing: the new
// owner inherits the old owner's objects (a database's StatefulSet and
// its data, here a ConfigMap with a field the new owner never set),
// where, with the operator running, the same deletion deletes them and
// the new owner gets new ones.
func TestAdvOwnerRecreatedWhileStoppedInheritsTheOldObjects(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv-recreated", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	old := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	controlplanetest.Eventually(t, wait, "the old owner's ConfigMap", func() bool { return advConfigMap(t, ns, "a-data") != nil })
	// State the old owner's object gathered (as a database's volume would).
	kube := controlplanetest.Clientset(cp.Config())
	cm := advConfigMap(t, ns, "a-data")
	cm.Data["gathered"] = "by the old owner's app"
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	if fresh.UID == old.UID {
		t.Fatal("same UID")
	}

	_, webapps = advStart(t, t.Context(), "adv-recreated", cmKind, advConfigMaps)
	var now *corev1.ConfigMap
	controlplanetest.Eventually(t, wait, "the new owner's ConfigMap", func() bool {
		now = advConfigMap(t, ns, "a-data")
		return now != nil && strings.Contains(now.Annotations[dependents.AnnotationOwner], string(fresh.UID))
	})
	if now.UID == cm.UID {
		t.Errorf("the owner deleted while stopped (UID %s) kept its ConfigMap (UID %s, data %v): "+
			"the new owner of the same name (UID %s) inherited it", old.UID, now.UID, now.Data, fresh.UID)
	}
}
