package generic_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// A generating handler renamed with SetOptions.TakeOver naming its old name
// takes the old handler's children it still returns. When its owner is
// deleted, everything the owner's sets held goes: the old set's child the
// renamed handler no longer returns, and the old set's inventory
// ConfigMap. The renamed handler used to prune only its own set: the old
// set (its leftover child, and its inventory, which has no owner reference
// for the garbage collector either) stayed in the namespace for good.
func TestRenamedGeneratingHandlerLeavesNothingOfTheOldSetWhenItsOwnerGoes(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	ctx := context.Background()
	createService(t, ns, "owner", 80)
	if err := applier.Apply(ctx, apply.Set{Owner: getService(t, ns, "owner"), ID: "old-name", NoOwnerReference: true},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "leftover"}}); err != nil {
		t.Fatal(err)
	}
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "new-name",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}}}, st, nil
		}, &generic.GeneratingHandlerOptions{NoOwnerReference: true, Set: generic.SetOptions{TakeOver: []string{"old-name"}}})
	start(t, f)
	eventually(t, "the renamed handler holds the child", func() bool {
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
		return err == nil && cm.Annotations[apply.AnnotationSetID] == "new-name"
	})
	if err := kube().CoreV1().Services(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the owner's child pruned", gone(ns, "child"))
	// Each set's inventory goes last, once all its objects went: with
	// none left, the deletion pass has pruned every set it prunes.
	var left []string
	defer func() {
		// Runs on eventually's timeout too (t.Fatal exits by Goexit).
		if len(left) > 0 {
			t.Errorf("inventories that outlived the deleted owner: %v", left)
		}
	}()
	eventually(t, "no inventory of the owner's sets left", func() bool {
		inventories, err := kube().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: apply.LabelInventory})
		if err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for _, inv := range inventories.Items {
			left = append(left, fmt.Sprintf("%s (set %q of %s)", inv.Name, inv.Annotations[apply.AnnotationSetID], inv.Annotations[apply.AnnotationOwner]))
		}
		return len(left) == 0
	})
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "leftover", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old set's child, returned by no handler, outlived the deleted owner: %v", err)
	}
}
