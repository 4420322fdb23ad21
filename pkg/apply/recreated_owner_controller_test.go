package apply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// An owner deleted and created again under the same name names the same set
// (the hash leaves the UID out), so its first Apply takes the children the
// old owner's set left. The children must end controlled by the new owner:
// the only controller reference on them is the old owner's, which this very
// set wrote (and which its apply removes, since its field manager owns it).
// Yielding the controller role to that reference while removing it leaves
// the child with no controller at all (metav1.GetControllerOf is nil), and
// nothing makes a generating handler apply again to repair it.
func TestRecreatedOwnerControlsTheChildrenItTakes(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "kids"}, cm("child", "1")); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner.Name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: again, ID: "kids"}, cm("child", "2")); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != again.UID {
		t.Errorf("child of an owner created again under its name: controller %+v, want the new owner %s; owner references %+v",
			ref, again.UID, got.OwnerReferences)
	}
}
