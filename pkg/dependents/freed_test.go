package dependents_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestRefusedOwnerGetsTheObjectOnceFreed: WebApp b is refused the
// ConfigMap WebApp a keeps (one object, one owner). Once a frees it,
// deleted or no longer wanting it, b is computed again and gets its own
// ConfigMap, without an event of its own.
func TestRefusedOwnerGetsTheObjectOnceFreed(t *testing.T) {
	for _, how := range []string{"owner deleted", "owner no longer wants it"} {
		t.Run(strings.ReplaceAll(how, " ", "-"), func(t *testing.T) {
			cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
			_, webapps := advStart(t, t.Context(), "freed", cmKind, advConfigMaps)
			ns := controlplanetest.Namespace(t, cp.Config())
			advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "shared"})
			controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "shared") != nil })
			b := advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "shared"})
			controlplanetest.Eventually(t, wait, "b refused", func() bool {
				return has(readyMessage(t, webapps, ns, "b"), "failed: ConfigMap shared")
			})

			if how == "owner deleted" {
				if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			} else {
				a, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				a.Spec.Config["cm"] = "elsewhere"
				if _, err := webapps.Update(t.Context(), a); err != nil {
					t.Fatal(err)
				}
			}
			controlplanetest.Eventually(t, wait, "b's ConfigMap, once a freed it", func() bool {
				cm := advConfigMap(t, ns, "shared")
				return cm != nil && strings.Contains(cm.Annotations[dependents.AnnotationOwner], string(b.UID)) &&
					cm.Data["owner"] == "b"
			})
			controlplanetest.Eventually(t, wait, "b Ready", func() bool {
				return strings.HasPrefix(readyMessage(t, webapps, ns, "b"), "ready: ConfigMap shared")
			})
		})
	}
}
