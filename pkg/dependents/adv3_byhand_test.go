package dependents_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3ObjectReplacedByHandIsReadAsTheOwnersOwn: WebApp a's Deployment
// exists (not ready), and its ConfigMap a-probe Requires it. A user
// replaces the Deployment (deleted, and created again by hand under its
// name, without the field manager's label: kubectl replace --force)
// while the Deployment controller's worker is busy with its key (here a
// handler of the user's holds it): the bridge reads the key once, and the
// loop gets one change from the registration's Deployment to the user's,
// no deletion. So no repair runs (the scheduler still holds its
// Deployment as created), the user's Deployment is judged as a's own, and
// once it reports every replica available, the ConfigMap that Requires
// a's Deployment is created on it. Had the loop seen the deletion, the
// repair would have found the user's object and refused it (FAILED: "it
// exists and was not created by ..."), and the ConfigMap would wait.
func TestAdv3ObjectReplacedByHandIsReadAsTheOwnersOwn(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advAppAndProbe(app)
	}
	ctx := t.Context()
	deployGVK := appsv1.SchemeGroupVersion.WithKind("Deployment")
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv3-byhand", handler, dependents.Options{
		FieldManager: "adv3-byhand", Kinds: []schema.GroupVersionKind{deployGVK, corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	deployments, err := f.ControllerFactory().ForKind(deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	gate := newAdvGate(t)
	// A handler of the user's on Deployments: slow, once, for a's key.
	deployments.RegisterHandler(ctx, "adv3-slow", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if key == ns+"/a" {
			gate.hold()
		}
		return obj, nil
	}))
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
	advCreateApp(t, webapps, ns, "a", map[string]string{"probe": "true"})
	controlplanetest.Eventually(t, wait, "the probe waiting for a's Deployment", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "ConfigMap a-probe: waiting for Deployment a")
	})

	kube := controlplanetest.Clientset(cp.Config()).AppsV1().Deployments(ns)
	gate.arm()
	dep, err := kube.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Labels["touched"] = "yes"
	if _, err := kube.Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	<-gate.entered // the Deployment worker is held on a's key
	if err := kube.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "a"}
	mine, err := kube.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, "users-own:1")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setAppReady(t, ns, "a") // the user's Deployment: every replica available
	controlplanetest.Eventually(t, wait, "the user's Deployment in the cache", func() bool {
		obj, ok, err := deployments.Informer().GetStore().GetByKey(ns + "/a")
		cached, _ := obj.(*appsv1.Deployment)
		return err == nil && ok && cached != nil && cached.UID == mine.UID && cached.Status.AvailableReplicas == 1
	})
	gate.open()

	controlplanetest.Eventually(t, wait, "a's Deployment refused, or the probe created", func() bool {
		return has(d.Summary(ns, "a").Message(), "not created by") || advConfigMap(t, ns, "a-probe") != nil
	})
	if cm := advConfigMap(t, ns, "a-probe"); cm != nil {
		t.Errorf("ConfigMap a-probe, which Requires a's Deployment, was created on the Deployment a user made by hand; a: %q",
			d.Summary(ns, "a").Message())
	}
}
