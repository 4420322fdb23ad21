package kubedescriptor_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var secretKind = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

func stringDataSecret(ns, password string) *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}, StringData: map[string]string{"password": password}}
}

// TestLandingsTellWhereAnApplyLanded: an update of a Secret written with
// stringData (stored as data, never returned, so no comparison of the
// fields the value sets can see it) is known to have landed once the
// object is at the version the apply returned, and not before; a later
// landing is needed for a mark made after this one; and a resync that
// finds the object in sync, applying nothing, records a landing at the
// live version.
func TestLandingsTellWhereAnApplyLanded(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	landings := &kubedescriptor.Landings{}
	s := scheduler(t, secretKind, kubedescriptor.Options{Landings: landings, Namespace: ns})
	key := kubedescriptor.KeyFor(secretKind, ns, "s")
	secrets := controlplanetest.Clientset(cp.Config()).CoreV1().Secrets(ns)

	commit(t, s.StartNBTransaction().SetValue(key, stringDataSecret(ns, "one")))
	first, err := secrets.Get(t.Context(), "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := landings.Seq()
	commit(t, s.StartNBTransaction().SetValue(key, stringDataSecret(ns, "two")))
	second, err := secrets.Get(t.Context(), "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(second.Data["password"]) != "two" || second.ResourceVersion == first.ResourceVersion {
		t.Fatalf("the update did not land: password %q, resourceVersion %s -> %s",
			second.Data["password"], first.ResourceVersion, second.ResourceVersion)
	}
	if landings.Landed(key, before, first) {
		t.Errorf("the Secret at the version before the update (%s) is taken for the update landed", first.ResourceVersion)
	}
	if !landings.Landed(key, before, second) {
		t.Errorf("the Secret at the version the update stored (%s) is not taken for the update landed", second.ResourceVersion)
	}
	after := landings.Seq()
	if landings.Landed(key, after, second) {
		t.Errorf("a mark made after the last landing is taken as ended by it")
	}

	rec := commit(t, s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue(key, stringDataSecret(ns, "two")))
	if ops := executed(rec); len(ops) != 0 {
		t.Fatalf("the resync of a Secret in sync applied %v", ops)
	}
	if !landings.Landed(key, after, second) {
		t.Errorf("the resync found the Secret in sync at %s, yet recorded no landing there", second.ResourceVersion)
	}
}
