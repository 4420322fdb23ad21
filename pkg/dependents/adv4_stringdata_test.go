package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv4NewRequirerOfAnUpdatedStringDataSecretWaitsForEver: WebApp a's
// Secret carries its password in stringData (as operators commonly
// write Secrets); the API server folds stringData into data and never
// returns it. a's spec changes the password and adds a ConfigMap ordered
// after the Secret. The update lands (the Secret's data holds the new
// password), but updating.go waits until the loop sees the Secret
// "holding every field the value sets" (kubedescriptor.Equivalent): the
// live Secret never has stringData, so the ConfigMap is held for ever
// ("waits for Secret a-secret to be seen at its new spec"), a hang no
// healing ends.
func TestAdv4NewRequirerOfAnUpdatedStringDataSecretWaitsForEver(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		secret := advStringDataSecret(app)
		objs := []*dependents.Object{secret}
		if app.Spec.Config["cm"] == "yes" {
			objs = append(objs, dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"},
				Data: map[string]string{"image": app.Spec.Image}}).After(secret))
		}
		return objs, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, webapps := advStart(t, ctx, "adv4-stringdata", kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	password := func() string { return advPassword(t, ns, "a-secret") }
	controlplanetest.Eventually(t, wait, "a's Secret", func() bool { return password() == "app:1" })
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image, app.Spec.Config = "app:2", map[string]string{"cm": "yes"}
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's Secret at the new password", func() bool { return password() == "app:2" })
	defer func() {
		if t.Failed() {
			t.Logf("a's condition: %q", readyMessage(t, webapps, ns, "a"))
		}
	}()
	controlplanetest.Eventually(t, wait, "a's ConfigMap, ordered after the updated Secret", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil
	})
}
