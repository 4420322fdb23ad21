package dependents_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdvRefusalNamesAnOptionTheRegistrationHasNot: a ConfigMap a user
// made by hand is refused to the owner that returns one of the same name
// (right), and the owner's condition tells the user how to proceed. It
// says "set Options.Adopt to take it over", kubedescriptor's option,
// which dependents.Options does not have: the user is sent to a setting
// that does not exist in the API they use.
func TestAdvRefusalNamesAnOptionTheRegistrationHasNot(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv-byhand", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Data: map[string]string{"by": "hand"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "mine"})
	var msg string
	controlplanetest.Eventually(t, wait, "a's condition says failed", func() bool {
		msg = readyMessage(t, webapps, ns, "a")
		return has(msg, "failed:")
	})
	if cm := advConfigMap(t, ns, "mine"); cm == nil || cm.Data["by"] != "hand" {
		t.Fatalf("the ConfigMap made by hand is gone or changed: %v", cm)
	}
	if _, ok := reflect.TypeFor[dependents.Options]().FieldByName("Adopt"); !ok && has(msg, "Options.Adopt") {
		t.Errorf("the condition tells the user to set Options.Adopt, which dependents.Options has not: %s", msg)
	}
}

// TestAdvCycleWaitsForEverSayingNothingOfIt: two objects each ordered
// after the other can never be created. The owner's condition says each
// waits for the other "to be ready: not created yet", Pending for ever,
// and nothing says there is a cycle (kro refuses a graph with one).
func TestAdvCycleWaitsForEverSayingNothingOfIt(t *testing.T) {
	cycle := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		p := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}})
		q := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "q"}}).After(p)
		p.After(q)
		return []*dependents.Object{p, q}, nil
	}
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv-cycle", cmKind, cycle)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", nil)
	var msg string
	controlplanetest.Eventually(t, wait, "a's condition computed", func() bool {
		msg = readyMessage(t, webapps, ns, "a")
		return msg != "" && msg != "not computed yet"
	})
	if !has(msg, "cycle") {
		t.Errorf("a dependency cycle, which can never be created, is reported as: %s", msg)
	}
}
