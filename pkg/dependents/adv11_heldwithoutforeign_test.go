package dependents_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv11HeldWithoutRecordWrittenOnAUsersObject: docs/safety.md
// promises the registration never overwrites what it did not mean to
// touch. recordHeldWithout patches h.live[key] for every object of a held
// owner without checking that the live object carries this field
// manager's lariat.dev/managed-by label (held.go, gone.go, before.go and
// vouch.go all check it). b is held after a restart (its handler fails)
// and its ConfigMap b-cm RequiresOwner a; the user deletes b-cm and
// creates a ConfigMap b-cm of their own, without the label. When a's
// marker goes, the user's ConfigMap must not get the held-without record.
// c's ConfigMap, which also RequiresOwner a, is the barrier: the scheduler
// deletes it in the transaction recordHeldWithout runs before.
func TestAdv11HeldWithoutRecordWrittenOnAUsersObject(t *testing.T) {
	r := newHeldRequirers(t, "adv11-hwforeign")
	ns := r.ns
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := r.start(t, ctx)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "b", map[string]string{})
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	controlplanetest.Eventually(t, wait, "b's and c's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "c-cm") != nil
	})
	stopAndWait(t, stop, d)

	r.bFailing.Store(true)
	d, webapps = r.start(t, t.Context())
	controlplanetest.Eventually(t, wait, "restart: b held", func() bool {
		return committedResync(d) && strings.Contains(readyMessage(t, webapps, ns, "b"), "held as they are")
	})
	kube := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	old := advConfigMap(t, ns, "b-cm")
	if err := kube.Delete(t.Context(), "b-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "b-cm gone", func() bool { return advConfigMap(t, ns, "b-cm") == nil })
	mine, err := kube.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-cm"},
		Data: map[string]string{"mine": "yes"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.UID == old.UID {
		t.Fatal("same UID")
	}
	// Let the registration see the user's ConfigMap: a barrier on the same
	// watch (a ConfigMap of nobody's, created after it).
	if _, err := kube.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-barrier"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.aReady.Store(false)
	touchImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's marker gone: c's ConfigMap deleted", func() bool {
		return advConfigMap(t, ns, "c-cm") == nil
	})
	now := advConfigMap(t, ns, "b-cm")
	if now == nil {
		t.Fatal("the user's ConfigMap b-cm was deleted")
	}
	if v, ok := now.Annotations[dependents.AnnotationHeldWithout]; ok {
		t.Errorf("the user's ConfigMap b-cm (no %s label) got %s=%q; managed fields %v", "lariat.dev/managed-by",
			dependents.AnnotationHeldWithout, v, now.ManagedFields)
	}
}
