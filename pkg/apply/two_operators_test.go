package apply_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
)

// applierAs returns an Applier writing as fieldManager: another operator
// sharing the cluster.
func applierAs(t *testing.T, fieldManager string) *apply.Applier {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(clients, apply.Options{FieldManager: fieldManager})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Two operators (two field managers) that happen to name a set alike for
// one owner (generating handlers are named after the handler: "children",
// on a built-in owner kind such as a Service or a ConfigMap) are two
// writers, each with its own children. Neither may delete what the other
// still wants: the second operator's first Apply must not prune the first
// operator's child, which it never made and does not name. Today the set's
// hash and inventory name leave the field manager out, so both operators
// share one label and one inventory, and each one's pruning deletes the
// other's children (after which they fight, each recreating its own).
func TestOperatorsWithLikeNamedSetsDoNotPruneEachOther(t *testing.T) {
	first, kube, ns, owner := setup(t)
	second := applierAs(t, "another-operator")
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "children"}
	if err := first.Apply(ctx, set, cm("first-child", "1")); err != nil {
		t.Fatal(err)
	}
	if err := second.Apply(ctx, set, cm("second-child", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "first-child", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Errorf("another operator's Apply (field manager another-operator) pruned the first operator's child (field manager test-operator)")
	} else if err != nil {
		t.Fatal(err)
	}
	if err := first.Apply(ctx, set, cm("first-child", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "second-child", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Errorf("the first operator's Apply pruned the other operator's child")
	} else if err != nil {
		t.Fatal(err)
	}
}
