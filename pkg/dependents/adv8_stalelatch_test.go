package dependents_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// advFinalizer is a finalizer a user (or another controller: a backup
// tool, say) keeps on an object, so that its deletion stays under way.
const advFinalizer = "adv8.lariat.dev/keep"

// advSetFinalizers patches the finalizers of ConfigMap ns/name.
func advSetFinalizers(t *testing.T, ctx context.Context, ns, name string, finalizers ...string) {
	t.Helper()
	list := `null`
	if len(finalizers) > 0 {
		list = `["` + strings.Join(finalizers, `","`) + `"]`
	}
	if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(ctx, name,
		types.MergePatchType, []byte(`{"metadata":{"finalizers":`+list+`}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAdv8StaleLatchEvidenceOfARequirerBeingDeleted: readiness across a
// restart is read from the objects that name a marker (before.go), and
// "a deletion under way when the replica stopped leaves the object, and
// so the latch, for one more round: the safe side (it keeps, never
// deletes)". It is not only a keep: the evidence names the marker's key,
// which is the owner's name, not its UID. a was available and b's
// ConfigMap RequiresOwnerAvailable a; b's ConfigMap carries a user's
// finalizer. a is deleted and created again under its name while the
// replica runs: the latch goes, the scheduler deletes b's ConfigMap (its
// deletion stays under way, the finalizer), and the new a, whose
// ConfigMap is not ready by its rule, was never available. After a
// restart the new a keeps an object naming its UID and b's ConfigMap on
// its way out still names "available/<ns>/a": the new a inherits the old
// a's latch, and c's ConfigMap (c created while no replica ran) is
// created on an owner that was never available.
func TestAdv8StaleLatchEvidenceOfARequirerBeingDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var aReady atomic.Bool
	aReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return aReady.Load(), "a's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwnerAvailable(ns, "a")}, nil
	}
	fm := "adv8-stalelatch"
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap, once a is available", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	advSetFinalizers(t, t.Context(), ns, "b-cm", advFinalizer)
	t.Cleanup(func() { advSetFinalizers(t, context.WithoutCancel(t.Context()), ns, "b-cm") })

	aReady.Store(false)
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the old a gone", func() bool {
		_, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		return err != nil
	})
	fresh := advCreateApp(t, webapps, ns, "a", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's ConfigMap being deleted, the new a's ConfigMap created", func() bool {
		bcm, acfg := advConfigMap(t, ns, "b-cm"), advConfigMap(t, ns, "a-cfg")
		return bcm != nil && bcm.DeletionTimestamp != nil &&
			acfg != nil && strings.Contains(acfg.Annotations[dependents.AnnotationOwner], string(fresh.UID))
	})
	controlplanetest.Eventually(t, wait, "b waiting for the new a", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "b"), "to be available")
	})
	stopAndWait(t, stop, d)

	advCreateApp(t, webapps, ns, "c", map[string]string{})
	d, webapps = advStart(t, t.Context(), fm, kinds, handler)
	controlplanetest.Eventually(t, wait, "the first resync committed, c computed", func() bool {
		return committedResync(d) && readyMessage(t, webapps, ns, "c") != ""
	})
	if advConfigMap(t, ns, "c-cm") != nil || slices.Contains(ops(d, kvscheduler.OpCreate), "ConfigMap c-cm") {
		t.Errorf("the new a was never available (a-cfg not ready by its rule: %q), yet c's ConfigMap, which "+
			"RequiresOwnerAvailable a, was created at the restart on the old a's latch; c's condition %q",
			readyMessage(t, webapps, ns, "a"), readyMessage(t, webapps, ns, "c"))
	}
}
