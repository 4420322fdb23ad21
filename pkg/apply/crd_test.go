package apply_test

import (
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// A kind recorded in a set's inventory whose CRD is deleted is gone, with
// its objects: the next Apply of the set refreshes the stale mapping,
// succeeds, and drops the kind from the inventory, instead of failing with
// NotFound from then on.
func TestRemovedCRDDoesNotBreakSet(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	dir, gvk, gvr, err := testkinds.NewLateKind(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.InstallCRDs(ctx, cp.Config(), dir); err != nil {
		t.Fatal(err)
	}
	set := apply.Set{Owner: owner, ID: "with-cr"}
	if err := a.Apply(ctx, set, cm("a", "1"), testkinds.Object(gvk, "", "g1")); err != nil {
		t.Fatal(err)
	}

	crds := apiextensionsclient.NewForConfigOrDie(cp.Config()).ApiextensionsV1().CustomResourceDefinitions()
	crdName := gvr.Resource + "." + gvr.Group
	if err := crds.Delete(ctx, crdName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait until the API server no longer serves the kind.
	waitDiscovery(t, gvr.String()+" to be no longer served", func() bool {
		_, err := kube.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		return apierrors.IsNotFound(err)
	})

	if err := a.Apply(ctx, set, cm("a", "2")); err != nil {
		t.Fatalf("apply after the CRD of a kind in the set was deleted: %v", err)
	}
	inv, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "lariat-set-"+hashOf(t, kube, ns, "a")[:20], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(inv.Data["kinds"], gvk.Group) {
		t.Fatalf("the inventory still lists the removed kind: %q", inv.Data["kinds"])
	}
	if got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); err != nil || got.Data["v"] != "2" {
		t.Fatalf("a not updated: %v", err)
	}
}
