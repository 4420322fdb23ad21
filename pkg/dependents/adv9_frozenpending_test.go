package dependents_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv9ConditionOfOwnerBeingDeletedNotKeptTrue: owner a (held by a
// finalizer of the user's) has a-keep, created, and a-x, which
// RequiresOwner b, not created yet. a is deleted: it is frozen (its
// objects are held values). b is then created and is ready, e (which
// requires b) is the barrier. a's summary says a-x "not ready: not created
// yet" and a-keep ready; a's condition must come to say the same. It does
// not: it stays at what it said when a was frozen ("a-x: waiting for b to
// be ready", though b is ready; or, in another run, "a-keep: not ready:
// not created yet", though a-keep exists), for the whole wait. c, which
// RequiresOwner a, is not created (a is not ready).
func TestAdv9ConditionOfOwnerBeingDeletedNotKeptTrue(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	d, webapps := advStart(t, t.Context(), "adv9-frozenpending", cmKind, advRequiresEach(ns))
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Finalizers: []string{advFinalizer}}, Spec: demov1.WebAppSpec{Image: "app:1",
		Config: map[string]string{"x": "b", "keep": ""}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = webapps.Patch(t.Context(), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	})
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "a"})
	controlplanetest.Eventually(t, wait, "a-keep created, a-x waiting for b, a's condition saying so", func() bool {
		s := d.Summary(ns, "a")
		return advConfigMap(t, ns, "a-keep") != nil && len(s.Pending) > 0 && readyMessage(t, webapps, ns, "a") == s.Message()
	})
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": ""})
	controlplanetest.Eventually(t, wait, "b's ConfigMap", func() bool { return advConfigMap(t, ns, "b-cm") != nil })
	advCreateApp(t, webapps, ns, "e", map[string]string{"cm": "b"})
	controlplanetest.Eventually(t, wait, "e's ConfigMap (b ready, a-x's dependency met)", func() bool {
		return advConfigMap(t, ns, "e-cm") != nil
	})
	controlplanetest.Eventually(t, wait, "e's condition says what its summary says (barrier)", func() bool {
		return readyMessage(t, webapps, ns, "e") == d.Summary(ns, "e").Message()
	})
	last := ""
	controlplanetest.Eventually(t, wait, "a's condition says what its summary says (a-keep exists)", func() bool {
		cond, sum := readyMessage(t, webapps, ns, "a"), d.Summary(ns, "a").Message()
		if seen := cond + " | " + sum; seen != last {
			last = seen
			t.Logf("a being deleted: condition %q, summary %q", cond, sum)
		}
		return cond == sum
	})
	if advConfigMap(t, ns, "a-x") != nil {
		t.Errorf("a is being deleted, yet a-x was created")
	}
	if advConfigMap(t, ns, "c-cm") != nil {
		t.Errorf("c-cm, which RequiresOwner a, was created while a-x does not exist")
	}
}
