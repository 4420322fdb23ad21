package dependents_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestStatusHookWritesTheOwnersFields: Options.Status writes the owner's
// own status fields (here waitingFor, the labels of what is pending) from
// the summary its condition is set from, in the same status write, and
// again as the summary changes.
func TestStatusHookWritesTheOwnersFields(t *testing.T) {
	hook := func(app *demov1.WebApp, s dependents.Summary, status *demov1.WebAppStatus) {
		status.WaitingFor = nil
		for _, p := range s.Pending {
			label, _, _ := strings.Cut(p, ":")
			status.WaitingFor = append(status.WaitingFor, label)
		}
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	// Only this test's WebApps: another registration's leftovers are not
	// this field manager's to apply.
	mine := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return stack(app)
	}
	_, webapps := register(t, t.Context(), "stack-status-hook", "stack-status-hook", kinds, mine,
		func(o *dependents.Options) { o.Status = hook })
	createApp(t, webapps, ns, "shop", "after")
	waiting := func() []string {
		app, err := webapps.Get(t.Context(), ns, "shop", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return app.Status.WaitingFor
	}
	controlplanetest.Eventually(t, wait, "waitingFor names the StatefulSet and the Deployment", func() bool {
		w := waiting()
		return slices.Contains(w, "StatefulSet shop-db") && slices.Contains(w, "Deployment shop")
	})
	controlplanetest.Eventually(t, wait, "the StatefulSet created", func() bool { return exists(t, "StatefulSet", ns, "shop-db") })
	setDBReady(t, ns, "shop-db", 1)
	controlplanetest.Eventually(t, wait, "waitingFor names only the Deployment", func() bool {
		w := waiting()
		return slices.Equal(w, []string{"Deployment shop"})
	})
	controlplanetest.Eventually(t, wait, "the Deployment created", func() bool { return exists(t, "Deployment", ns, "shop") })
	setAppReady(t, ns, "shop")
	controlplanetest.Eventually(t, wait, "waitingFor empty and the condition True", func() bool {
		app, err := webapps.Get(t.Context(), ns, "shop", metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := dependents.DefaultCondition.Get(app.Status.Conditions)
		return len(app.Status.WaitingFor) == 0 && c != nil && c.Status == metav1.ConditionTrue
	})
}

// TestStatusHookOfAnotherTypeIsRefused: an Options.Status that is not a
// func of the owner's and status' types is an error of Register, not a
// hook silently never called.
func TestStatusHookOfAnotherTypeIsRefused(t *testing.T) {
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	_, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "stack-status-bad", stack, dependents.Options{
		FieldManager: "stack-status-bad", Kinds: kinds, Logger: controlplanetest.QuietLogger(),
		Status: func(*demov1.WebApp, dependents.Summary, *metav1.ObjectMeta) {},
	})
	if err == nil || !strings.Contains(err.Error(), "Options.Status") {
		t.Fatalf("Register with a status hook of another type: error %v, want one naming Options.Status", err)
	}
}
