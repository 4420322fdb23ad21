package dependents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../../crds"}}, &cp)
}

// wait bounds the waits for what the API server and the informers reach
// in their own time; it only guards against hangs.
const wait = 60 * time.Second

var kinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("Secret"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
	appsv1.SchemeGroupVersion.WithKind("Deployment"),
}

// stack is the test's handler: a database (Secret, then a StatefulSet
// ordered after it, and a Service) and an app Deployment that waits for
// the database to be ready: ordered after it, or requiring it when the
// WebApp's config says kind=requires.
func stack(app *demov1.WebApp) ([]*dependents.Object, error) {
	db := app.Name + "-db"
	labels := map[string]string{"app": db}
	secret := dependents.Of(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: db},
		Data: map[string][]byte{"password": []byte("s3cret")}})
	sts := dependents.Of(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: db},
		Spec: appsv1.StatefulSetSpec{ServiceName: db, Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, "postgres:17")}}).After(secret)
	svc := dependents.Of(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: db},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 5432}}}})
	appLabels := map[string]string{"app": app.Name}
	dep := dependents.Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: appLabels},
			Template: podTemplate(appLabels, app.Spec.Image)}})
	if other := app.Spec.Config["needs"]; other != "" {
		dep.RequiresOwner(app.Namespace, other)
	}
	if app.Spec.Config["kind"] == "requires" {
		dep.Requires(sts)
	} else {
		dep.After(sts)
	}
	return []*dependents.Object{secret, sts, svc, dep}, nil
}

func podTemplate(labels map[string]string, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}}}
}

// start registers stack for WebApps and starts the factory.
func start(t *testing.T) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return startCtx(t, t.Context())
}

// startCtx is start, running until ctx ends, with the options mods change.
func startCtx(t *testing.T, ctx context.Context, mods ...func(*dependents.Options)) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return register(t, ctx, "stack", "stack-test", kinds, stack, mods...)
}

// advStart registers handler for WebApps (kinds, field manager and name
// fm) and starts the factory, until ctx ends, with the options mods change.
func advStart(t *testing.T, ctx context.Context, fm string, kinds []schema.GroupVersionKind,
	handler dependents.Handler[*demov1.WebApp], mods ...func(*dependents.Options)) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return register(t, ctx, fm, fm, kinds, handler, mods...)
}

func register(t *testing.T, ctx context.Context, name, fm string, kinds []schema.GroupVersionKind,
	handler dependents.Handler[*demov1.WebApp], mods ...func(*dependents.Options)) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger()}
	for _, mod := range mods {
		mod(&opts)
	}
	return dependentstest.Start(t, ctx, cp.Config(), nil, name, handler, opts)
}

func createApp(t *testing.T, c democtl.WebAppController, ns, name, kind string) *demov1.WebApp {
	t.Helper()
	app, err := c.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: demov1.WebAppSpec{Image: "app:1", Config: map[string]string{"kind": kind}}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// The shared helpers, bound to this package's control plane.

func readyMessage(t *testing.T, c democtl.WebAppController, ns, name string) string {
	return dependentstest.ReadyMessage(t.Context(), c, ns, name)
}

func setDBReady(t *testing.T, ns, name string, ready int32) {
	t.Helper()
	dependentstest.SetStatefulSetReady(t, controlplanetest.Clientset(cp.Config()), ns, name, ready)
}

func setAppReady(t *testing.T, ns, name string) {
	t.Helper()
	dependentstest.SetDeploymentReady(t, controlplanetest.Clientset(cp.Config()), ns, name)
}

func exists(t *testing.T, kind, ns, name string) bool {
	return dependentstest.Exists(t.Context(), controlplanetest.Clientset(cp.Config()), kind, ns, name)
}

func ops(d *dependents.Dependents, op kvscheduler.Operation) []string {
	return dependentstest.Ops(d, op)
}

func webAppStatus() generic.StatusAccess[*demov1.WebApp, demov1.WebAppStatus] {
	return dependentstest.WebAppStatus()
}

// before tells whether a comes before b in list (both present).
func before(list []string, a, b string) bool { return dependentstest.InOrder(list, a, b) }

func has(s, sub string) bool { return strings.Contains(s, sub) }
