package dependents_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// advCPUApp is a handler: the app's Deployment, unstructured, whose
// container requests the CPU of the WebApp's config "cpu" as written
// there ("1" or "1000m", one quantity), and, when config "probe" is
// "true", a ConfigMap "<name>-probe" that Requires it.
func advCPUApp(app *demov1.WebApp) ([]*dependents.Object, error) {
	labels := map[string]any{"app": app.Name}
	dep := dependents.Of(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": app.Name},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": app.Spec.Image,
					"resources": map[string]any{"requests": map[string]any{"cpu": app.Spec.Config["cpu"]}}}}}}}}})
	probe := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-probe"}}).
		Requires(dep).IncludeWhen(app.Spec.Config["probe"] == "true")
	return []*dependents.Object{dep, probe}, nil
}

// TestAdv3HoldAfterAnUpdateTheServerStoresAsItWasOutlivesAResync: one
// update of the WebApp writes its Deployment's CPU request "1" as
// "1000m" (the same quantity: the API server stores the object as it was,
// no new resourceVersion, no event) and adds a ConfigMap that Requires the
// Deployment, which is ready. The loop holds the ConfigMap until it sees
// the Deployment where its update landed. It held it for ever: it waited
// for the Deployment to hold every field the value sets ("1000m", which
// the server never returns), and not even a full resync ended the hold.
// The hold must end with the transaction that applied the update (the
// apply returned the Deployment at the version the loop has), with no
// event of the Deployment and no resync.
func TestAdv3HoldAfterAnUpdateTheServerStoresAsItWasOutlivesAResync(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advCPUApp(app)
	}
	kinds := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "adv3-noop", kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cpu": "1"})
	controlplanetest.Eventually(t, wait, "a's Deployment", func() bool { return exists(t, "Deployment", ns, "a") })
	setAppReady(t, ns, "a")
	controlplanetest.Eventually(t, wait, "a Ready", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ready: Deployment a") &&
			!has(readyMessage(t, webapps, ns, "a"), "pending")
	})
	kube := controlplanetest.Clientset(cp.Config())
	before, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config = map[string]string{"cpu": "1000m", "probe": "true"}
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("a's condition: %q", readyMessage(t, webapps, ns, "a"))
		}
	}()
	controlplanetest.Eventually(t, wait, "the ConfigMap that Requires the ready Deployment a", func() bool {
		return advConfigMap(t, ns, "a-probe") != nil
	})
	after, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("the Deployment was written (resourceVersion %s -> %s): the test needs an update stored as it was",
			before.ResourceVersion, after.ResourceVersion)
	}
}
