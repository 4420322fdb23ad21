package dependents_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// advChain is a handler: ConfigMaps <name>-c1 … <name>-c4, each ordered
// after the one before (created c1 first; deleted c4 first).
func advChain(app *demov1.WebApp) ([]*dependents.Object, error) {
	var objs []*dependents.Object
	for i := 1; i <= 4; i++ {
		o := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-c%d", app.Name, i)}})
		if i > 1 {
			o.After(objs[i-2])
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// TestAdvOwnerDeletedWhileStoppedDeletesInReverseOrder: an owner's objects
// are deleted in reverse order of creation when it goes (docs/safety.md,
// "Deleted together, dependents go first"; docs/dependents.md: no owner
// reference, because "the scheduler deletes them in reverse order (and
// its first resync after a restart deletes those of owners deleted
// meanwhile)"), also for an owner deleted while the operator was stopped,
// whose objects the restart's first resync deletes. Before: the readiness
// markers that order them exist only in the stopped scheduler's memory,
// the retrieved objects' ordering-only dependencies named only markers
// that no longer existed, and orderDeletes looked only at the (absent)
// wanted value's dependencies: the chain was deleted in key order, the
// first created first.
func TestAdvOwnerDeletedWhileStoppedDeletesInReverseOrder(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv-chain", cmKind, advChain)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "gone", nil)
	controlplanetest.Eventually(t, wait, "the last of the chain", func() bool { return advConfigMap(t, ns, "gone-c4") != nil })
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	d, _ = advStart(t, t.Context(), "adv-chain", cmKind, advChain)
	names := []string{"gone-c4", "gone-c3", "gone-c2", "gone-c1"}
	var deleted []string
	controlplanetest.Eventually(t, wait, "every delete recorded", func() bool {
		deleted = nil
		for _, op := range ops(d, kvscheduler.OpDelete) {
			if n, ok := strings.CutPrefix(op, "ConfigMap "); ok && slices.Contains(names, n) {
				deleted = append(deleted, n)
			}
		}
		return len(deleted) == len(names)
	})
	if !slices.Equal(deleted, names) {
		t.Fatalf("the owner deleted while stopped: its objects deleted in the order %v, want %v (reverse of creation)", deleted, names)
	}
}
