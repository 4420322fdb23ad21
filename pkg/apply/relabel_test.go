package apply_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// An object a user moved by hand from one set to another, by labelling it
// with the other set's lariat.dev/set hash, is that other set's: the set it
// left must refuse it with a *ClaimedError and leave it as it is (docs/safety.md:
// "a desired object whose lariat.dev/set label names another set ... is left
// as it is"). The annotations the first set wrote on it (its set ID and
// owner) still name the first set; they must not hand the object back to it.
func TestObjectRelabelledToAnotherSetIsNotTakenBack(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	first := apply.Set{Owner: owner, ID: "first"}
	relabelled, secondHash := moveToASecondSet(t, a, kube, ns, first, cm("moved", "first"))

	err := a.Apply(ctx, first, cm("moved", "first again"))
	var claimed *apply.ClaimedError
	if !errors.As(err, &claimed) {
		t.Errorf("apply of a set naming an object labelled with another set's hash: %v, want a *apply.ClaimedError", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "moved", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != relabelled.ResourceVersion || got.Labels[apply.LabelSet] != secondHash {
		t.Errorf("the first set took back an object labelled as the second set's: label %s=%s (second set's is %s), data %v, resourceVersion %s→%s",
			apply.LabelSet, got.Labels[apply.LabelSet], secondHash, got.Data, relabelled.ResourceVersion, got.ResourceVersion)
	}
}

// The same object, when the set may recreate it (RecreateImmutable) and its
// apply is rejected for an immutable field: a recreate "never deletes an
// object the set does not hold", yet the set deletes the object that is now
// the other set's and creates it again as its own.
func TestRecreateDoesNotDeleteAnObjectRelabelledToAnotherSet(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	first := apply.Set{Owner: owner, ID: "first", RecreateImmutable: true}
	relabelled, _ := moveToASecondSet(t, a, kube, ns, first, immutableCM("moved", "first"))

	err := a.Apply(ctx, first, immutableCM("moved", "changed"))
	var claimed *apply.ClaimedError
	if !errors.As(err, &claimed) {
		t.Errorf("apply (may recreate) of an object labelled with another set's hash: %v, want a *apply.ClaimedError", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "moved", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the other set's object is gone: %v", err)
	}
	if got.UID != relabelled.UID {
		t.Errorf("the set deleted and recreated an object labelled as another set's: uid %s→%s, label %s, data %v",
			relabelled.UID, got.UID, got.Labels[apply.LabelSet], got.Data)
	}
}

// moveToASecondSet applies moved in first, applies a second set of another
// owner in ns, then has the user move moved into that second set by hand
// (labelling it with the second set's hash); it returns moved as
// relabelled, and the second set's hash.
func moveToASecondSet(t *testing.T, a *apply.Applier, kube *kubernetes.Clientset, ns string, first apply.Set, moved *corev1.ConfigMap) (*corev1.ConfigMap, string) {
	t.Helper()
	ctx := t.Context()
	owner2, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("owner2", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second := apply.Set{Owner: owner2, ID: "second"}
	if err := a.Apply(ctx, first, moved); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, second, cm("second-own", "second")); err != nil {
		t.Fatal(err)
	}
	secondHash := hashOf(t, kube, ns, "second-own")
	patch := []byte(`{"metadata":{"labels":{"` + apply.LabelSet + `":"` + secondHash + `"}}}`)
	relabelled, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, moved.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: byHand})
	if err != nil {
		t.Fatal(err)
	}
	return relabelled, secondHash
}
