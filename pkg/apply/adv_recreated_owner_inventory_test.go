package apply_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// TestAdvLatePruneOfAGoneOwnerDeletesTheRecreatedOwnersInventory: the
// deletion pass of a gone owner (Set.OwnerKey) prunes the owner's child and
// then deletes the set's inventory. Before that delete arrives, the owner
// is created again and its child applied for it, which writes the set's
// inventory anew (same set: same owner kind, namespace and name). The
// inventory's delete carries no precondition, so the new owner's inventory
// goes: when the new owner is deleted in turn, its deletion pass finds no
// inventory, lists nothing and leaves the new owner's child behind for
// ever. (docs/safety.md: the stale pass "leaves the new owner's objects,
// and the inventory pointing at them, alone".)
func TestAdvLatePruneOfAGoneOwnerDeletesTheRecreatedOwnersInventory(t *testing.T) {
	fresh, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := func(o *corev1.ConfigMap) apply.Set {
		return apply.Set{Owner: o, ID: "children", NoOwnerReference: true}
	}
	if err := fresh.Apply(ctx, set(owner), cm("first-child", "for the first owner")); err != nil {
		t.Fatal(err)
	}
	list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var inventory string
	for _, c := range list.Items {
		if strings.HasPrefix(c.Name, "lariat-set-") {
			inventory = c.Name
		}
	}
	if inventory == "" {
		t.Fatal("no inventory found")
	}
	stale, hold, release := staleApplier(t, "/namespaces/"+ns+"/configmaps/"+inventory)
	gone := func() apply.Set {
		key := apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: "owner"}
		return apply.Set{OwnerKey: &key, ID: "children", NoOwnerReference: true}
	}

	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pruned := pruneHeld(t, stale, gone(), hold, "inventory")

	owner2, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(ctx, set(owner2), cm("second-child", "for the second owner")); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-pruned; err != nil {
		t.Logf("the late deletion pass returned %v", err)
	}
	_, invErr := kube.CoreV1().ConfigMaps(ns).Get(ctx, inventory, metav1.GetOptions{})

	// The new owner goes: its deletion pass should prune its child.
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(ctx, gone()); err != nil {
		t.Fatal(err)
	}
	_, childErr := kube.CoreV1().ConfigMaps(ns).Get(ctx, "second-child", metav1.GetOptions{})
	if !apierrors.IsNotFound(childErr) {
		t.Fatalf("the child applied for the second owner %s outlived it (get: %v): the late deletion pass of the first owner had deleted the set's inventory %s, which the second owner had rewritten (inventory after that pass: %v)",
			owner2.UID, childErr, inventory, invErr)
	}
}
