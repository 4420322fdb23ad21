// Command appstack keeps, for every WebApp, a small app stack in order: a
// database (a Secret, then a StatefulSet, and a Service) and the app's
// Deployment, created only once the database is ready. The WebApp's Ready
// condition says what is ready, what waits and why, and what failed.
package main

import (
	"context"
	"flag"

	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubeconfig"
	"github.com/lariat-dev/lariat/pkg/signals"
)

// stack returns a WebApp's objects and what each waits for.
func stack(app *demov1.WebApp) ([]*dependents.Object, error) {
	db := app.Name + "-db"
	dbLabels := map[string]string{"app": db}
	password := app.Spec.Config["dbPassword"]
	secret := dependents.Of(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: db},
		Data:       map[string][]byte{"password": []byte(password)},
	}).IncludeWhen(password != "") // without a password, no Secret
	database := dependents.Of(&appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: db},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: db, Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: dbLabels},
			Template: pod(dbLabels, "postgres:17", db),
		},
	}).After(secret) // ordering only: created after the Secret
	service := dependents.Of(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: db},
		Spec:       corev1.ServiceSpec{Selector: dbLabels, Ports: []corev1.ServicePort{{Port: 5432}}},
	})
	appLabels := map[string]string{"app": app.Name}
	deployment := dependents.Of(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: app.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: appLabels},
			Template: pod(appLabels, app.Spec.Image, db),
		},
	}).Requires(database, service) // removed whenever the database is not ready
	return []*dependents.Object{secret, database, service, deployment}, nil
}

// pod is a one-container pod template reading the database's Secret,
// optional: without a dbPassword there is no Secret, and a required one
// would keep the pods from starting (and the Deployment waiting) for good.
func pod(labels map[string]string, image, secret string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: image,
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Optional: ptr.To(true)}}},
		}}},
	}
}

// register registers stack for every WebApp; start f after it.
func register(ctx context.Context, f *generic.Factory, log *logrus.Logger) (*dependents.Dependents, error) {
	df, err := demo.NewFactory(f)
	if err != nil {
		return nil, err
	}
	webapps, err := df.Demo().V1().WebApp()
	if err != nil {
		return nil, err
	}
	return democtl.RegisterWebAppDependents(ctx, f, webapps, "appstack", stack, dependents.Options{
		FieldManager: "appstack",
		Kinds: []schema.GroupVersionKind{
			corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("Service"),
			appsv1.SchemeGroupVersion.WithKind("StatefulSet"), appsv1.SchemeGroupVersion.WithKind("Deployment"),
		},
		Logger: log,
	})
}

func main() {
	path := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	flag.Parse()
	ctx, stop := signals.Context(context.Background())
	defer stop()
	cfg, err := kubeconfig.Load(*path)
	if err != nil {
		logrus.Fatal(err)
	}
	f, err := generic.NewFactoryFromConfig(cfg, nil, nil)
	if err != nil {
		logrus.Fatal(err)
	}
	d, err := register(ctx, f, logrus.StandardLogger())
	if err == nil {
		err = f.Start(ctx, 2)
	}
	if err != nil {
		logrus.Fatal(err)
	}
	<-ctx.Done()
	if err := d.Wait(context.Background()); err != nil {
		logrus.Fatal(err)
	}
}
