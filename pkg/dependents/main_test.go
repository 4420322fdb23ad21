package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
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

// webAppStatus reaches a WebApp's status (the generated access is
// unexported).
func webAppStatus() generic.StatusAccess[*demov1.WebApp, demov1.WebAppStatus] {
	return generic.StatusAccess[*demov1.WebApp, demov1.WebAppStatus]{
		Get:                func(o *demov1.WebApp) demov1.WebAppStatus { return o.Status },
		Set:                func(o *demov1.WebApp, s demov1.WebAppStatus) { o.Status = s },
		Conditions:         func(s *demov1.WebAppStatus) *[]metav1.Condition { return &s.Conditions },
		ObservedGeneration: func(s *demov1.WebAppStatus) *int64 { return &s.ObservedGeneration },
	}
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
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	df, err := demo.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	webapps, err := df.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	opts := dependents.Options{FieldManager: "stack-test", Kinds: kinds, Logger: controlplanetest.QuietLogger()}
	for _, mod := range mods {
		mod(&opts)
	}
	d, err := dependents.Register(ctx, f, webapps, webAppStatus(), "stack", stack, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if err := d.Wait(waitCtx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	return d, webapps
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

// readyCondition returns the message of the WebApp's Ready condition, ""
// while it has none.
func readyMessage(t *testing.T, c democtl.WebAppController, ns, name string) string {
	t.Helper()
	app, err := c.Get(t.Context(), ns, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if cond := dependents.DefaultCondition.Get(app.Status.Conditions); cond != nil {
		return cond.Message
	}
	return ""
}

// setDBReady writes the StatefulSet's status as its controller would:
// readyReplicas of 1 replica.
func setDBReady(t *testing.T, ns, name string, ready int32) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	sts, err := kube.AppsV1().StatefulSets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sts.Status.ObservedGeneration, sts.Status.Replicas, sts.Status.ReadyReplicas = sts.Generation, 1, ready
	if _, err := kube.AppsV1().StatefulSets(ns).UpdateStatus(t.Context(), sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setAppReady writes the Deployment's status as its controller would.
func setAppReady(t *testing.T, ns, name string) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.ObservedGeneration, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas = d.Generation, 1, 1, 1
	if _, err := kube.AppsV1().Deployments(ns).UpdateStatus(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// exists tells whether the object of kind at ns/name is on the server.
func exists(t *testing.T, kind, ns, name string) bool {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	var err error
	switch kind {
	case "Secret":
		_, err = kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	case "Service":
		_, err = kube.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	case "StatefulSet":
		_, err = kube.AppsV1().StatefulSets(ns).Get(t.Context(), name, metav1.GetOptions{})
	case "Deployment":
		_, err = kube.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	}
	return err == nil
}

// ops lists the scheduler's executed creates or deletes of objects (not
// markers) so far, as "Kind name", in the order they ran.
func ops(d *dependents.Dependents, op kvscheduler.Operation) []string {
	var out []string
	for _, rec := range d.Scheduler().TransactionHistory(time.Time{}, time.Time{}) {
		for _, o := range rec.Executed {
			if o.Operation != op || o.NOOP || o.Err != nil {
				continue
			}
			if ref, err := kubedescriptor.ParseKey(o.Key); err == nil {
				out = append(out, ref.Kind+" "+ref.Name)
			}
		}
	}
	return out
}

// before tells whether a comes before b in list (both present).
func before(list []string, a, b string) bool {
	i, j := slices.Index(list, a), slices.Index(list, b)
	return i >= 0 && j >= 0 && i < j
}

func has(s, sub string) bool { return strings.Contains(s, sub) }
