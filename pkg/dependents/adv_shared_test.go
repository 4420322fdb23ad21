package dependents_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// advConfigMaps is a handler: one ConfigMap, named by the WebApp's config
// "cm", saying which WebApp wants it.
func advConfigMaps(app *demov1.WebApp) ([]*dependents.Object, error) {
	cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"]},
		Data: map[string]string{"owner": app.Name}})
	return []*dependents.Object{cm}, nil
}

func advCreateApp(t *testing.T, c democtl.WebAppController, ns, name string, config map[string]string) *demov1.WebApp {
	t.Helper()
	app, err := c.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: demov1.WebAppSpec{Image: "app:1", Config: config}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func advConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return cm
}

// TestAdvSecondOwnerTakesOverAnotherOwnersObject: WebApp a wants the
// ConfigMap "shared"; WebApp b, of the same registration, returns a
// ConfigMap of the same name. The registration puts b's under the same
// scheduler key: b's object overwrites a's (annotation, data), b's status
// says Ready, and when b is deleted the ConfigMap a still wants is deleted
// with it. Safety says Lariat never takes over what it did not create for
// that owner and never deletes what is still wanted; b should fail
// (FAILED in its status), a's object untouched.
func TestAdvSecondOwnerTakesOverAnotherOwnersObject(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv-shared", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	a := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "shared") != nil })

	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "shared"})
	controlplanetest.Eventually(t, wait, "b's condition", func() bool {
		m := readyMessage(t, webapps, ns, "b")
		return m != "" && m != "not computed yet"
	})
	if m := readyMessage(t, webapps, ns, "b"); !has(m, "failed: ConfigMap shared") {
		t.Errorf("b's condition does not say its ConfigMap failed: %s", m)
	}
	cm := advConfigMap(t, ns, "shared")
	if cm == nil {
		t.Fatal("ConfigMap shared is gone")
	}
	if ann := cm.Annotations[dependents.AnnotationOwner]; !strings.Contains(ann, string(a.UID)) || cm.Data["owner"] != "a" {
		t.Errorf("WebApp b took over WebApp a's ConfigMap: annotation %q, data %v", ann, cm.Data)
	}

	if err := webapps.Delete(t.Context(), ns, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A later owner's object, created once the loop has handled b's deletion.
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "after-b"})
	controlplanetest.Eventually(t, wait, "c's ConfigMap", func() bool { return advConfigMap(t, ns, "after-b") != nil })
	if advConfigMap(t, ns, "shared") == nil {
		t.Errorf("WebApp b deleted, the ConfigMap WebApp a still wants is gone (a's condition: %s)", readyMessage(t, webapps, ns, "a"))
	}
}
