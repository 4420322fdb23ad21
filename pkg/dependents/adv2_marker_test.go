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

// advBaseAndApp is a handler: a ConfigMap "base" (named by the WebApp's
// config "base", wanted unless config "with-base" is "false") holding the
// owner's name, and the owner's own ConfigMap "<name>-app" that Requires
// it: the app reads its own owner's base.
func advBaseAndApp(app *demov1.WebApp) ([]*dependents.Object, error) {
	base := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["base"]},
		Data: map[string]string{"owner": app.Name}}).IncludeWhen(app.Spec.Config["with-base"] != "false")
	own := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-app"},
		Data: map[string]string{"base": app.Spec.Config["base"]}}).Requires(base)
	return []*dependents.Object{base, own}, nil
}

// TestAdvRequirerCreatedOnAnotherOwnersObject: WebApp a keeps ConfigMap
// "shared" (ready). WebApp b returns a ConfigMap of the same name, which
// it is refused ("it is WebApp ns/a's", FAILED), or which it does not
// want (IncludeWhen false), and its own ConfigMap b-app that Requires it.
// b's object is never created, so b-app must wait (docs/dependents.md:
// Requires: created once the others are ready; IncludeWhen: "what
// requires it waits"). But the readiness marker
// dependents/<name>/ready/<object key> is one scheduler key per object
// key, shared by every owner, and a's marker satisfies b's dependency:
// b-app is created on the strength of another owner's object (b's app
// runs with a's data), and b's status reports it ready.
func TestAdvRequirerCreatedOnAnotherOwnersObject(t *testing.T) {
	for _, how := range []string{"refused", "not-wanted"} {
		t.Run(how, func(t *testing.T) {
			cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
			_, webapps := advStart(t, t.Context(), "adv2-marker", cmKind, advBaseAndApp)
			ns := controlplanetest.Namespace(t, cp.Config())
			advCreateApp(t, webapps, ns, "a", map[string]string{"base": "shared"})
			controlplanetest.Eventually(t, wait, "a ready (its base and a-app)", func() bool {
				return has(readyMessage(t, webapps, ns, "a"), "ready: ConfigMap shared, ConfigMap a-app") ||
					has(readyMessage(t, webapps, ns, "a"), "ready: ConfigMap a-app, ConfigMap shared")
			})

			cfg := map[string]string{"base": "shared"}
			if how == "not-wanted" {
				cfg["with-base"] = "false"
			}
			advCreateApp(t, webapps, ns, "b", cfg)
			// Either b-app is created, or b's status says it waits: the
			// loop has computed b and committed its transaction.
			controlplanetest.Eventually(t, wait, "b computed", func() bool {
				return advConfigMap(t, ns, "b-app") != nil || has(readyMessage(t, webapps, ns, "b"), "ConfigMap b-app: waiting for")
			})
			if cm := advConfigMap(t, ns, "b-app"); cm != nil {
				shared := advConfigMap(t, ns, "shared")
				t.Errorf("b-app, which requires b's own ConfigMap shared (%s), was created on WebApp a's (data %v); b's condition: %s",
					how, shared.Data, readyMessage(t, webapps, ns, "b"))
			}
		})
	}
}
