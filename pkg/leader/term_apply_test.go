package leader_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestCreateByApplyCarriesItsTerm: pkg/apply creates an object it read as
// absent by an apply that only creates; through the fence that apply is
// stamped with its term and admitted, and the term policy judges such an
// apply as the create it is: one stamped with an ended term is refused.
func TestCreateByApplyCarriesItsTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	clients, err := client.NewSharedClientFactory(e.Fence(cp.Config()), nil)
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "term-test", InventoryNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	inTerm(t, e, func(ctx context.Context) {
		first = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, first)
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: ns}, Data: map[string]string{"k": "v"}}
		if err := applier.Apply(ctx, apply.Set{ID: "term-test"}, cm); err != nil {
			t.Fatalf("apply in the current term: %v", err)
		}
	})
	got, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "applied", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[leader.TermIDLabel] != termID(first) || got.Data["k"] != "v" {
		t.Errorf("created by apply: stamp %q, data %v; want the term %q it was sent in", got.Labels[leader.TermIDLabel], got.Data, first)
	}

	// Term one is over (released). An apply that only creates, stamped
	// with it, is refused once the API server has seen the release.
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"stale","resourceVersion":"18446744073709551615",` +
		`"labels":{"` + leader.TermLeaseLabel + `":"` + leader.TermLeaseLabelValue(ns, "lease") + `","` + leader.TermIDLabel + `":"` + termID(first) + `"}}}`)
	force := true
	eventually(t, "an apply stamped with the ended term refused", func() bool {
		_, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), "stale", types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "term-test", Force: &force, DryRun: []string{metav1.DryRunAll}})
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err != nil
	})
}
