package dependents_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestSummaryNamesTheOwnersWaitedFor: Summary.WaitingForOwners lists the
// other owners a pending object waits for, by either kind of owner
// requirement, so that a status hook fills a field such as the WebApp's
// waitingFor without parsing messages; it follows them as they come.
func TestSummaryNamesTheOwnersWaitedFor(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns { // another test's leftovers are not this field manager's
			return nil, nil
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name}})
		if other := app.Spec.Config["available"]; other != "" {
			cm.RequiresOwnerAvailable(app.Namespace, other)
		}
		if other := app.Spec.Config["ready"]; other != "" {
			cm.RequiresOwner(app.Namespace, other)
		}
		return []*dependents.Object{cm}, nil
	}
	hook := func(_ *demov1.WebApp, s dependents.Summary, status *demov1.WebAppStatus) {
		status.WaitingFor = nil
		for _, key := range s.WaitingForOwners {
			_, name, _ := strings.Cut(key, "/")
			status.WaitingFor = append(status.WaitingFor, name)
		}
	}
	cms := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "waiting-for-owners", cms, handler,
		func(o *dependents.Options) { o.Status = hook })
	create := func(name string, config map[string]string) {
		if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: demov1.WebAppSpec{Image: "app:1", Config: config}}); err != nil {
			t.Fatal(err)
		}
	}
	waitingFor := func(want ...string) func() bool {
		return func() bool {
			app, err := webapps.Get(t.Context(), ns, "web", metav1.GetOptions{})
			return err == nil && slices.Equal(app.Status.WaitingFor, want)
		}
	}
	create("web", map[string]string{"available": "api", "ready": "db"})
	controlplanetest.Eventually(t, wait, "web waits for api and db", waitingFor("api", "db"))
	create("db", nil)
	controlplanetest.Eventually(t, wait, "web waits for api only", waitingFor("api"))
	create("api", nil)
	controlplanetest.Eventually(t, wait, "web waits for nothing, its condition True", func() bool {
		app, err := webapps.Get(t.Context(), ns, "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := dependents.DefaultCondition.Get(app.Status.Conditions)
		return len(app.Status.WaitingFor) == 0 && c != nil && c.Status == metav1.ConditionTrue
	})
}
