package dependents_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestObjectThatPanicsWhenCopiedFailsItsOwnerAlone: a handler returns, for
// owner p, an unstructured ConfigMap holding a Go int (not the int64 JSON
// numbers decode to), a common slip when building objects by hand;
// copying it panics. That is p's error, as a panic in the handler itself
// is: p's condition says so, q's objects stay, and the loop stays healthy.
// An abort instead would heal by a resync that panics in the same place,
// again and again, and no owner would be handled until the loop gave up.
func TestObjectThatPanicsWhenCopiedFailsItsOwnerAlone(t *testing.T) {
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "p-cm"},
		"data":     map[string]any{"replicas": 3},
	}}
	d, webapps, ns := startWithABadOwner(t, "panic-object", bad)
	controlplanetest.Eventually(t, wait, "p's condition naming the panic", func() bool {
		return has(dependentstest.ReadyMessage(t.Context(), webapps, ns, "p"), "panic")
	})
	// Another event after p's: the loop still handles owners.
	advCreateApp(t, webapps, ns, "r", nil)
	controlplanetest.Eventually(t, wait, "r's ConfigMap, r ready", func() bool {
		return advConfigMap(t, ns, "r-cm") != nil && adv13Ready(t, webapps, ns, "r")
	})
	if err := d.Loop().Health(); err != nil {
		t.Errorf("loop health after p's object panicked: %v (handler errors %q)", err, adv17HandlerErrors(d))
	}
	for _, del := range ops(d, kvscheduler.OpDelete) {
		if del == "ConfigMap q-cm" {
			t.Errorf("q's ConfigMap was deleted after p's object panicked")
		}
	}
	if errs := adv17HandlerErrors(d); len(errs) > 0 {
		t.Errorf("p's panic failed events (it is p's error alone): %q", errs)
	}
}
