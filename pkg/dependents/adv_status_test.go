package dependents_test

import (
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdvStatusClaimsANewGenerationReadyBeforeItIsComputed: the owner's
// condition is "set from what the loop judged" and is True "once every
// object is ready". The status handler runs on the owner's own update,
// independently of the loop, and stamps the owner's new generation on the
// summary of the old one: while the loop has not yet computed the new
// spec (here its handler is slow), the condition says Ready=True at the
// new generation, although the ConfigMap that generation wants does not
// exist. A client waiting for observedGeneration and Ready (kubectl wait,
// Argo CD, Flux) takes a spec that was never applied for done.
func TestAdvStatusClaimsANewGenerationReadyBeforeItIsComputed(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	// Only this test's owner is slow: the registration also handles the
	// WebApps other tests (and earlier runs, with -count) leave in the
	// cluster, and one of them blocking the loop's first resync would
	// leave this owner "not computed yet" for ever.
	ns := controlplanetest.Namespace(t, cp.Config())
	slow := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Spec.Config["cm"] == "two" {
			<-release // a slow handler: the loop has not computed generation 2 yet
		}
		return advConfigMaps(app)
	}
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv-status", cmKind, slow)
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "one"})
	cond := func() *metav1.Condition {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return dependents.DefaultCondition.Get(app.Status.Conditions)
	}
	controlplanetest.Eventually(t, wait, "a Ready", func() bool {
		c := cond()
		return c != nil && c.Status == metav1.ConditionTrue
	})

	app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app.Spec.Config = map[string]string{"cm": "two"}
	if app, err = webapps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	var c *metav1.Condition
	controlplanetest.Eventually(t, wait, "the condition at generation 2", func() bool {
		c = cond()
		return c != nil && c.ObservedGeneration == app.Generation
	})
	if c.Status == metav1.ConditionTrue && advConfigMap(t, ns, "two") == nil {
		t.Errorf("condition %s=%s at generation %d (%q), but the ConfigMap generation %d wants does not exist",
			c.Type, c.Status, c.ObservedGeneration, c.Message, app.Generation)
	}
	once.Do(func() { close(release) })
}
