package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdvOwnerOutsideOptionsNamespaceLeaksItsObjects: Options.Namespace
// "limits the scheduler's reads to one namespace", but not the owners: a
// WebApp in another namespace is handled, its ConfigMap created there,
// where the scheduler never reads. Deleted while the operator is
// stopped, its ConfigMap is never deleted: the first resync, which
// "deletes those of owners deleted meanwhile", does not see it (a leak).
// Either such an owner is not handled, or its objects are read back.
func TestAdvOwnerOutsideOptionsNamespaceLeaksItsObjects(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	mine := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	inMine := func(o *dependents.Options) { o.Namespace = mine }
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := advStart(t, ctx, "adv-ns", cmKind, advConfigMaps, inMine)
	advCreateApp(t, webapps, other, "elsewhere", map[string]string{"cm": "elsewhere"})
	controlplanetest.Eventually(t, wait, "the other namespace's owner handled (or refused)", func() bool {
		m := readyMessage(t, webapps, other, "elsewhere")
		return m != "" && m != "not computed yet"
	})
	if advConfigMap(t, other, "elsewhere") == nil {
		// Refused: nothing created where the scheduler does not read, and
		// the owner's condition says why.
		if m := readyMessage(t, webapps, other, "elsewhere"); !has(m, "outside Options.Namespace") {
			t.Errorf("the owner outside Options.Namespace has no ConfigMap, and its condition does not say why: %s", m)
		}
		return
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), other, "elsewhere", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	_, webapps = advStart(t, t.Context(), "adv-ns", cmKind, advConfigMaps, inMine)
	// An owner created after the first resync: once its ConfigMap exists,
	// the first resync's deletes are done.
	advCreateApp(t, webapps, mine, "later", map[string]string{"cm": "later"})
	controlplanetest.Eventually(t, wait, "the later owner's ConfigMap", func() bool { return advConfigMap(t, mine, "later") != nil })
	if cm := advConfigMap(t, other, "elsewhere"); cm != nil {
		t.Errorf("the ConfigMap of WebApp %s/elsewhere, deleted while stopped, is still there (annotation %q)",
			other, cm.Annotations[dependents.AnnotationOwner])
	}
}
