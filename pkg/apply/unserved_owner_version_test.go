package apply_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// gadgetCRD is a CRD of group with versions v1 (stored) and v2, v2 served
// as servedV2 says.
func gadgetCRD(group string, servedV2 bool) *unstructured.Unstructured {
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": schema},
				map[string]any{"name": "v2", "served": servedV2, "storage": false, "schema": schema},
			},
		},
	}}
}

// A whole set is pruned for a gone owner only once a live read confirms the
// owner is gone; "the owner is NotFound (or its kind is no longer served)".
// A read through a version the kind no longer serves answers NotFound for
// the resource, not for the owner: here the owner's CRD stopped serving v2
// (the version the applier's discovery cache prefers) while the owner goes
// on existing, served through v1. listSet re-reads discovery on such a
// NotFound; the owner check does not, takes the live owner for gone and
// prunes its children.
func TestOwnerReadThroughAStaleVersionIsNotGone(t *testing.T) {
	a, kube, ns, _ := setup(t)
	ctx := t.Context()
	group := fmt.Sprintf("g%d.lariat.dev", time.Now().UnixNano())
	dyn := dynamic.NewForConfigOrDie(cp.Config())
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, gadgetCRD(group, true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(t.Context(), "gadgets."+group, metav1.DeleteOptions{}) })
	disco := discovery.NewDiscoveryClientForConfigOrDie(cp.Config())
	served := func(version string) bool {
		_, err := disco.ServerResourcesForGroupVersion(group + "/" + version)
		return err == nil
	}
	waitDiscovery(t, "both versions served", func() bool { return served("v1") && served("v2") })
	gadgets := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}).Namespace(ns)
	var owner *unstructured.Unstructured
	waitDiscovery(t, "the owner created", func() bool {
		var err error
		owner, err = gadgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "owner"}}}, metav1.CreateOptions{})
		return err == nil
	})
	set := apply.Set{Owner: owner, ID: "kids"}
	if err := a.Apply(ctx, set, cm("child", "1")); err != nil {
		t.Fatal(err)
	}
	// The applier's view of the kind: its preferred version, v2.
	gone := apply.Set{ID: "kids", OwnerKey: &apply.ObjectKey{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}, Namespace: ns, Name: "owner"}}
	if _, err := a.DryRun(ctx, gone); !errors.Is(err, apply.ErrOwnerExists) {
		t.Fatalf("dry run for a live owner: %v, want ErrOwnerExists", err)
	}

	crd, err := crds.Get(ctx, "gadgets."+group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unserved := gadgetCRD(group, false)
	unserved.SetResourceVersion(crd.GetResourceVersion())
	if _, err := crds.Update(ctx, unserved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDiscovery(t, "v2 no longer served", func() bool { return served("v1") && !served("v2") })
	if _, err := gadgets.Get(ctx, "owner", metav1.GetOptions{}); err != nil {
		t.Fatalf("the owner, through v1: %v", err)
	}

	err = a.Apply(ctx, gone)
	if !errors.Is(err, apply.ErrOwnerExists) {
		t.Errorf("pruning the set of an owner that exists (served through v1 only now): %v, want ErrOwnerExists", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Errorf("the child of a live owner was pruned after its kind stopped serving the version the applier had cached")
	} else if err != nil {
		t.Fatal(err)
	}
}
