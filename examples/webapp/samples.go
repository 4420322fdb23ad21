package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
)

// sampleNamespace holds the sample WebApps unless --namespace names
// another.
const sampleNamespace = "demo"

// samples returns the sample WebApps in the order they are created: a
// frontend that needs an api that needs a database, created front to back
// so that the first two visibly wait for what they depend on.
func samples(namespace string) []*demov1.WebApp {
	app := func(name, image string, replicas, port int32, config map[string]string, dependsOn ...string) *demov1.WebApp {
		return &demov1.WebApp{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: demov1.WebAppSpec{Image: image, Replicas: ptr.To(replicas), Port: port,
				Config: config, DependsOn: dependsOn},
		}
	}
	return []*demov1.WebApp{
		app("frontend", "nginx:1.27", 2, 80, map[string]string{"GREETING": "Hello from Lariat"}, "api"),
		app("api", "registry.k8s.io/e2e-test-images/agnhost:2.53", 2, 8080, map[string]string{"LOG_LEVEL": "info"}, "database"),
		app("database", "postgres:17", 1, 5432, map[string]string{"POSTGRES_DB": "shop"}),
	}
}

// createSamples creates the sample namespace and WebApps, pausing between
// WebApps so that a reader can follow what each one causes.
func createSamples(ctx context.Context, cfg *rest.Config, namespace string, webapps democtl.WebAppClient, pause time.Duration, out *printer) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	for _, app := range samples(namespace) {
		deps := "depends on nothing"
		if len(app.Spec.DependsOn) > 0 {
			deps = fmt.Sprintf("depends on %v", app.Spec.DependsOn)
		}
		out.say("Creating WebApp %s/%s (%s, %s).", app.Namespace, app.Name, app.Spec.Image, deps)
		if _, err := webapps.Create(ctx, app); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create WebApp %s: %w", app.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	return nil
}
