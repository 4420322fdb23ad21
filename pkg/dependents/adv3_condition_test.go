package dependents_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3TwoRegistrationsOfOneOwnerKindShareItsCondition: an operator
// keeps a WebApp's Deployment with one registration and its ConfigMap
// with another (two field managers, as Options.FieldManager asks), both
// with the default Options.Condition. Nothing refuses it, and both status
// handlers write the one Ready condition, each from its own summary: in
// every pass of the WebApp's handlers the Deployment's registration writes
// False ("pending: Deployment a") and the ConfigMap's writes True
// ("ready: ConfigMap a") over it, and each write starts another pass (the
// WebApp's status is written for ever). The owner reads Ready=True while
// its Deployment has no replica available. The test records, through a
// watch, the statuses written at generation 2 (a touch), and ends once
// generation 3's (another touch) is written: generation 2's passes are
// over by then.
func TestAdv3TwoRegistrationsOfOneOwnerKindShareItsCondition(t *testing.T) {
	advOpen(t, "two registrations of one owner kind overwrite each other's condition")
	ns := controlplanetest.Namespace(t, cp.Config())
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	deployment := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		labels := map[string]string{"app": app.Name}
		return []*dependents.Object{dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podTemplate(labels, app.Spec.Image)}})}, nil
	}
	configMap := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name}})}, nil
	}
	log := controlplanetest.QuietLogger()
	dApp, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv3-app", deployment, dependents.Options{
		FieldManager: "adv3-app", Kinds: []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	dCfg, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv3-cfg", configMap, dependents.Options{
		FieldManager: "adv3-cfg", Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}, Logger: log})
	if err != nil {
		t.Logf("the second registration of the condition is refused: %v", err) // a fix may refuse it
		return
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "a", map[string]string{"bump": "0"})
	controlplanetest.Eventually(t, wait, "both registrations computed a", func() bool {
		return dApp.Summary(ns, "a").Known && dCfg.Summary(ns, "a").AllReady()
	})
	w, err := webapps.Watch(t.Context(), ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	gen := bumpApp(t, webapps, ns, "a")
	readyAt := map[bool]string{} // at generation gen: Ready status -> a message
	next := gen
	for ev := range w.ResultChan() {
		app, ok := ev.Object.(*demov1.WebApp)
		if !ok {
			continue
		}
		c := dependents.DefaultCondition.Get(app.Status.Conditions)
		if c == nil {
			continue
		}
		if c.ObservedGeneration == gen && app.Status.ObservedGeneration == gen {
			readyAt[c.Status == metav1.ConditionTrue] = c.Message
			if next == gen && len(readyAt) > 0 {
				next = bumpApp(t, webapps, ns, "a")
			}
		}
		if next != gen && c.ObservedGeneration == next {
			break
		}
	}
	if msg, ok := readyAt[true]; ok {
		t.Errorf("WebApp a was written Ready=True (%q) at generation %d while its Deployment is not ready (the Deployment's registration: %q; False written too: %q)",
			msg, gen, dApp.Summary(ns, "a").Message(), readyAt[false])
	}
}

// bumpApp changes the WebApp's spec (its config "bump", with a merge
// patch: the status writes would make an update conflict) and returns its
// new generation.
func bumpApp(t *testing.T, webapps democtl.WebAppController, ns, name string) int64 {
	t.Helper()
	cur, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A value the spec has not had: its generation grows with every change.
	patch := fmt.Sprintf(`{"spec":{"config":{"bump":"%d"}}}`, cur.Generation+1)
	app, err := webapps.Patch(t.Context(), ns, name, types.MergePatchType, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	return app.Generation
}
