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

// TestAdv4UpdatedStringDataSecretIsNeverRepairedAtOnce: with
// Options.RepairDrift, WebApp a's Secret (password in stringData, which
// the API server folds into data) is updated once by a's new spec, then
// its password is changed by hand. First found as the hold never ending
// (updating.go compared with kubedescriptor.Equivalent, and the live
// Secret has no stringData, so every later change was taken for the
// loop's own update in flight); that is fixed (the hold ends where the
// update landed). Then, below the loop: the server records the field
// manager's Apply entry as owning stringData.password only, and
// data.password as owned by nobody, so the descriptor, which judged drift
// only by the fields its manager owns as they were stored, found the
// Secret in sync: neither the repair nor the periodic healing applied it
// back. Now a version someone else wrote since the last landing pushes the
// repair, whose read judges it with a dry run of the applied value
// (kubedescriptor's outside.go). The sync point: c's Secret, deleted by
// hand after the edit (same watch, so its event is handled after the
// edit's, which pushes a's repair first), is repaired after a's repair
// would have run. The same test with the password in data passes.
func TestAdv4UpdatedStringDataSecretIsNeverRepairedAtOnce(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if app.Name == "c" {
			return []*dependents.Object{dependents.Of(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c-secret"},
				Data: map[string][]byte{"image": []byte(app.Spec.Image)}})}, nil
		}
		return []*dependents.Object{advStringDataSecret(app)}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret")}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, webapps := advStart(t, ctx, "adv4-sddrift", kinds, handler, func(o *dependents.Options) { o.RepairDrift = true })
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	secrets := controlplanetest.Clientset(cp.Config()).CoreV1().Secrets(ns)
	password := func() string { return advPassword(t, ns, "a-secret") }
	cSecret := func() *corev1.Secret {
		s, err := secrets.Get(t.Context(), "c-secret", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return s
	}
	controlplanetest.Eventually(t, wait, "a's and c's Secrets", func() bool {
		return password() == "app:1" && cSecret() != nil
	})
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's Secret at the new password", func() bool { return password() == "app:2" })
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(t.Context(), "a-secret", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Data["password"] = []byte("by-hand")
		_, err = secrets.Update(t.Context(), s, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	old := cSecret()
	if err := secrets.Delete(t.Context(), "c-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "c's Secret repaired", func() bool {
		now := cSecret()
		return now != nil && now.UID != old.UID
	})
	if got := password(); got != "app:2" {
		t.Errorf("a's Secret, its password changed by hand, was not repaired at once: password %q, want %q", got, "app:2")
	}
}
