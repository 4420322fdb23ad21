package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv13ObjectMadeByHandWhileItsNameWaitsIsNotAdopted: WebApp a wants
// ConfigMap p, which RequiresOwner b; b does not exist yet, so p waits.
// Meanwhile a user makes a ConfigMap p by hand. Once b is ready, a's p
// may be created: the user's must be left as it is (not patched, not
// labelled, never deleted with a) and a's condition must name it.
func TestAdv13ObjectMadeByHandWhileItsNameWaitsIsNotAdopted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"]},
			Data: map[string]string{"owner": app.Name}})
		if r := app.Spec.Config["requires"]; r != "" {
			cm.RequiresOwner(ns, r)
		}
		return []*dependents.Object{cm}, nil
	}
	_, webapps := advStart(t, t.Context(), "adv13-byhand", adv13CMKind, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "p", "requires": "b"})
	controlplanetest.Eventually(t, wait, "a's p waiting for b", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "waiting for WebApp "+ns+"/b")
	})
	kube := controlplanetest.Clientset(cp.Config())
	mine, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Data: map[string]string{"by": "hand"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "b-cm"})
	var msg string
	controlplanetest.Eventually(t, wait, "a's condition names p as failed", func() bool {
		msg = readyMessage(t, webapps, ns, "a")
		return has(msg, "failed: ConfigMap p")
	})
	cm := advConfigMap(t, ns, "p")
	if cm == nil || cm.UID != mine.UID || cm.ResourceVersion != mine.ResourceVersion {
		t.Fatalf("the ConfigMap p made by hand was changed or replaced: %v", cm)
	}
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A later owner's object, created once the loop has handled a's deletion.
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "after-a"})
	controlplanetest.Eventually(t, wait, "c's ConfigMap", func() bool { return advConfigMap(t, ns, "after-a") != nil })
	if cm := advConfigMap(t, ns, "p"); cm == nil || cm.UID != mine.UID {
		t.Fatalf("the ConfigMap p made by hand went with a: %v", cm)
	}
}

// TestAdv13ApplyForbiddenIsNamedInTheCondition: the registration may not
// patch ConfigMaps (a server-side apply is a patch), so a's ConfigMap can
// never be created: a's condition must say it failed and why.
func TestAdv13ApplyForbiddenIsNamedInTheCondition(t *testing.T) {
	cfg := adv13User(t, adv13AllBut("get", "list", "watch", "create", "update", "delete"))
	_, webapps := adv13StartConfigMaps(t, cfg, "adv13-nopatch")
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "x"})
	var msg string
	controlplanetest.Eventually(t, wait, "a's condition names the refused apply", func() bool {
		msg = readyMessage(t, webapps, ns, "a")
		return has(msg, "failed: ConfigMap x") && has(msg, "forbidden")
	})
	t.Logf("a: %s", msg)
}
