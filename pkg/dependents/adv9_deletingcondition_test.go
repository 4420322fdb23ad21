package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv9OwnerFirstSeenBeingDeletedConditionSaysSo: docs/dependents.md
// (Safety): "An owner first seen being deleted (at a start) has its live
// objects held as a held owner's, its condition saying it is being
// deleted". a (held by a finalizer of the user's) is deleted while the
// replica is stopped; at the restart its summary says it is being
// deleted, but its condition never does: the status handler skips an
// owner with a deletionTimestamp, so the condition keeps saying a's
// objects are ready.
func TestAdv9OwnerFirstSeenBeingDeletedConditionSaysSo(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv9-deletingcond", cmKind, configMapPerEntry(ns))
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Finalizers: []string{advFinalizer}}, Spec: demov1.WebAppSpec{Image: "app:1",
		Config: map[string]string{"1": "a-keep"}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = webapps.Patch(context.WithoutCancel(t.Context()), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	})
	controlplanetest.Eventually(t, wait, "a's ConfigMap, a's condition saying it is ready", func() bool {
		return advConfigMap(t, ns, "a-keep") != nil && has(readyMessage(t, webapps, ns, "a"), "ready: ConfigMap a-keep")
	})
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	d, webapps = advStart(t, t.Context(), "adv9-deletingcond", cmKind, configMapPerEntry(ns))
	controlplanetest.Eventually(t, wait, "a resync committed, a's summary saying it is being deleted", func() bool {
		return committedResync(d) && has(d.Summary(ns, "a").Message(), "is being deleted")
	})
	last := ""
	controlplanetest.Eventually(t, wait, "a's condition saying it is being deleted", func() bool {
		msg := readyMessage(t, webapps, ns, "a")
		if msg != last {
			last = msg
			t.Logf("a's condition: %q (summary %q)", msg, d.Summary(ns, "a").Message())
		}
		return has(msg, "is being deleted")
	})
}
