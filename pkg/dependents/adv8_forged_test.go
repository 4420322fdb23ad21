package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv8LatchForgedByAUsersAnnotation: the latch after a restart is read
// from lariat.dev/depends-on on any live object labelled with the field
// manager (before.go), including one the registration never wrote that
// annotation on. a was never available (its ConfigMap is not ready by its
// rule) and b's ConfigMap, which RequiresOwnerAvailable a, waits. A user
// annotates a's own ConfigMap (kubectl annotate; the registration applies
// no depends-on there, so no field manager conflict and nothing to repair)
// with the key of a's latched marker. At the next start a inherits a latch
// it never had, and b's ConfigMap is created on an owner never available.
func TestAdv8LatchForgedByAUsersAnnotation(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return false, "a's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwnerAvailable(ns, "a")}, nil
	}
	fm := "adv8-forged"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", nil)
	advCreateApp(t, webapps, ns, "b", nil)
	controlplanetest.Eventually(t, wait, "b waiting for a to be available", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "b"), "to be available") && advConfigMap(t, ns, "a-cfg") != nil
	})
	stopAndWait(t, stop, d)

	forged := "dependents/" + fm + "/available/" + ns + "/a"
	patch := `{"metadata":{"annotations":{"` + kubedescriptor.AnnotationDependsOn + `":"` + forged + `"}}}`
	if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), "a-cfg",
		types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "the first resync committed", func() bool { return committedResync(d) })
	if advConfigMap(t, ns, "b-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap b-cm") {
		t.Errorf("a was never available (%q), yet after a user's annotation of a-cfg naming %s, b's ConfigMap, "+
			"which RequiresOwnerAvailable a, was created; b's condition %q", readyMessage(t, webapps, ns, "a"), forged,
			readyMessage(t, webapps, ns, "b"))
	}
}
