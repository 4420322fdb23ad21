package dependents_test

import (
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// passProbe records, for the passes of one key through the kind's
// handlers, whether a condition held when the pass started (its first
// handler) and the Ready condition of the object its last handler is
// given (what the status handlers in between left).
type passProbe struct {
	mu      sync.Mutex
	started bool     // the condition, at the start of the pass under way
	after   []string // the Ready status after each pass that started with it
}

func (p *passProbe) start(held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = held
}

func (p *passProbe) end(app *demov1.WebApp) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		return
	}
	st := "none"
	if c := dependents.DefaultCondition.Get(app.Status.Conditions); c != nil {
		st = string(c.Status) + " " + c.Message
	}
	p.after = append(p.after, st)
}

func (p *passProbe) last() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.after) == 0 {
		return "", false
	}
	return p.after[len(p.after)-1], true
}

// TestAdv3TwoRegistrationsOfOneOwnerKindShareItsCondition: an operator
// keeps a WebApp's Deployment with one registration and its ConfigMap
// with another (two field managers, as Options.FieldManager asks), both
// with the default Options.Condition. Nothing refuses it, and both status
// handlers write the one Ready condition, each from its own summary: in
// a pass of the WebApp's handlers the Deployment's registration writes
// False ("pending: Deployment a") and the ConfigMap's writes True
// ("ready: ConfigMap a") over it, and each write starts another pass (the
// WebApp's status is written for ever: exploring, its resourceVersion went
// from 237 to 249 in 5 s with nothing changing, and an update of its spec
// retried on conflict gave up). The owner reads Ready=True while its
// Deployment has no replica available. Probes, the kind's first and last
// handlers, read the Ready condition a pass leaves, of a pass that starts
// once both registrations computed the WebApp. The second registration
// is refused (Register's error names both and Options.Condition); the
// scenario runs when it is not, and shows the fight.
func TestAdv3TwoRegistrationsOfOneOwnerKindShareItsCondition(t *testing.T) {
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
	var dApp, dCfg *dependents.Dependents
	probe := &passProbe{}
	computed := func() bool { // both registrations computed a, at its generation
		app, err := webapps.Cache().Get(ns, "a")
		return err == nil && dApp.Summary(ns, "a").Known && dApp.Summary(ns, "a").Generation == app.Generation &&
			dCfg.Summary(ns, "a").Known && dCfg.Summary(ns, "a").Generation == app.Generation
	}
	webapps.OnChange(t.Context(), "adv3-probe-first", func(key string, app *demov1.WebApp) (*demov1.WebApp, error) {
		if app != nil && key == ns+"/a" {
			probe.start(computed())
		}
		return app, nil
	})
	log := controlplanetest.QuietLogger()
	var err error
	dApp, err = dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv3-app", deployment, dependents.Options{
		FieldManager: "adv3-app", Kinds: []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	dCfg, err = dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv3-cfg", configMap, dependents.Options{
		FieldManager: "adv3-cfg", Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}, Logger: log})
	if err != nil {
		// The designed behaviour: the second registration writing the
		// condition is refused, with an error that names both and says
		// what to change.
		for _, want := range []string{`"adv3-cfg"`, `"adv3-app"`, `"Ready"`, "Options.Condition"} {
			if !has(err.Error(), want) {
				t.Errorf("the refusal %q does not name %s", err, want)
			}
		}
		return
	}
	t.Errorf("a second registration writing WebApp's Ready condition was not refused; running both:")
	webapps.OnChange(t.Context(), "adv3-probe-last", func(key string, app *demov1.WebApp) (*demov1.WebApp, error) {
		if app != nil && key == ns+"/a" {
			probe.end(app)
		}
		return app, nil
	})
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "both registrations computed a", computed)
	webapps.Enqueue(ns, "a") // a pass that starts now
	controlplanetest.Eventually(t, wait, "a pass of a's handlers after both computed it", func() bool {
		_, ok := probe.last()
		return ok
	})
	if st, _ := probe.last(); has(st, "True") {
		t.Errorf("WebApp a reads Ready %q after a pass of its status handlers, while its Deployment is not ready (the Deployment's registration: %q)",
			st, dApp.Summary(ns, "a").Message())
	}
}
