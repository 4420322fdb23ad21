package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// advStringDataSecret is app's Secret "<name>-secret" with its image as
// the password, written in stringData (which the API server folds into
// data and never returns).
func advStringDataSecret(app *demov1.WebApp) *dependents.Object {
	return dependents.Of(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-secret"},
		StringData: map[string]string{"password": app.Spec.Image}})
}

// advPassword returns the password the API server holds in the data of
// Secret name in ns ("" when it cannot be read).
func advPassword(t *testing.T, ns, name string) string {
	s, err := controlplanetest.Clientset(cp.Config()).CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(s.Data["password"])
}
