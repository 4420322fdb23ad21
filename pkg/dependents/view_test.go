package dependents_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestViewHandlerReadsOtherOwnersAndLiveObjects: a ViewHandler reads
// another owner's spec and whether its ConfigMap exists, through the
// View; when either changes, the reader is computed again (it has no
// event of its own), and its ConfigMap follows.
func TestViewHandlerReadsOtherOwnersAndLiveObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	// reads is the handler of the example below.
	reads := func(app *demov1.WebApp, view dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns { // another test's leftovers are not this field manager's
			return nil, nil
		}
		data := map[string]string{"image": app.Spec.Image}
		if name := app.Spec.Config["reads"]; name != "" {
			data["other"], data["otherLive"] = "none", "no"
			if other, ok := view.Owner(app.Namespace, name); ok {
				data["other"] = other.Spec.Image
			}
			if _, ok := view.Live(cmGVK, app.Namespace, name+"-cfg"); ok {
				data["otherLive"] = "yes"
			}
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cfg"}, Data: data})}, nil
	}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.RegisterView(t.Context(), f, webapps, webAppStatus(), "view-test", reads, dependents.Options{
		FieldManager: "view-test", Kinds: []schema.GroupVersionKind{cmGVK}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
		defer cancel()
		if err := d.Wait(ctx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	kube := controlplanetest.Clientset(cp.Config())
	frontSays := func(other, live string) func() bool {
		return func() bool {
			cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "front-cfg", metav1.GetOptions{})
			return err == nil && cm.Data["other"] == other && cm.Data["otherLive"] == live
		}
	}
	create := func(name, image string, config map[string]string) {
		if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: demov1.WebAppSpec{Image: image, Config: config}}); err != nil {
			t.Fatal(err)
		}
	}
	create("front", "front:1", map[string]string{"reads": "back"})
	controlplanetest.Eventually(t, wait, "front: no back", frontSays("none", "no"))
	create("back", "back:1", nil)
	controlplanetest.Eventually(t, wait, "front: back:1, its ConfigMap live", frontSays("back:1", "yes"))
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		back, err := webapps.Get(t.Context(), ns, "back", metav1.GetOptions{})
		if err != nil {
			return err
		}
		back.Spec.Image = "back:2"
		_, err = webapps.Update(t.Context(), back)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "front: back:2", frontSays("back:2", "yes"))
	if err := webapps.Delete(t.Context(), ns, "back", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "front: no back, its ConfigMap gone", frontSays("none", "no"))
}
