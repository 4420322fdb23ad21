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

// TestAdvRecreatedOwnerInheritsTheOldOwnersReadyStatus: an owner is
// identified by UID as well as name (DESIGN.md, Replicas), and the
// condition never says Ready for a spec the loop has not computed
// (docs/safety.md). But the loop's reports, which the status handler
// reads, are keyed by namespace/name and stamped with a generation only:
// WebApp a (ConfigMap "one", Ready, generation 1) is deleted and created
// again under its name (new UID, generation 1, wanting ConfigMap "two")
// while the loop is busy (another owner's handler is slow). The new
// owner's status handler runs on its creation, finds the old owner's
// report at generation 1, and writes Ready=True at observedGeneration 1,
// "ready: ConfigMap one", on the new owner, whose ConfigMap "two" does not
// exist and whose "one" is about to be deleted. A client waiting for
// observedGeneration and Ready takes it for done.
func TestAdvRecreatedOwnerInheritsTheOldOwnersReadyStatus(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	var releaseOnce, enterOnce sync.Once
	ns := controlplanetest.Namespace(t, cp.Config())
	slow := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "blocker" {
			enterOnce.Do(func() { close(entered) })
			<-release // the loop is busy: what is queued behind waits
		}
		return advConfigMaps(app)
	}
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv2-recreated-status", cmKind, slow)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	old := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "one"})
	cond := func() *metav1.Condition {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil || app.UID == old.UID {
			return nil
		}
		return dependents.DefaultCondition.Get(app.Status.Conditions)
	}
	controlplanetest.Eventually(t, wait, "the first a Ready", func() bool {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := dependents.DefaultCondition.Get(app.Status.Conditions)
		return c != nil && c.Status == metav1.ConditionTrue
	})

	advCreateApp(t, webapps, ns, "blocker", map[string]string{"cm": "blocker"})
	<-entered // the loop is in the blocker's handler
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var created *demov1.WebApp
	controlplanetest.Eventually(t, wait, "a created again", func() bool {
		app, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"},
			Spec: demov1.WebAppSpec{Image: "app:1", Config: map[string]string{"cm": "two"}}})
		created = app
		return err == nil
	})
	var c *metav1.Condition
	controlplanetest.Eventually(t, wait, "the new a's condition", func() bool {
		c = cond()
		return c != nil
	})
	if c.Status == metav1.ConditionTrue && advConfigMap(t, ns, "two") == nil {
		t.Errorf("the new WebApp a (UID %s, generation %d) says %s=%s at generation %d (%q): the deleted owner's report; its ConfigMap two does not exist",
			created.UID, created.Generation, c.Type, c.Status, c.ObservedGeneration, c.Message)
	}
	releaseOnce.Do(func() { close(release) })
	controlplanetest.Eventually(t, wait, "the new a's ConfigMap", func() bool { return advConfigMap(t, ns, "two") != nil })
}
