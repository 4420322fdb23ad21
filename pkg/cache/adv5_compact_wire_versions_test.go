package cache_test

import (
	"fmt"
	"slices"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5Pairs is the compact and default informers of each version of
// group's Dial over ns, typed and unstructured, with a watch-list and with
// plain lists.
func adv5Pairs(t *testing.T, ns, group string) []adv5Pair {
	t.Helper()
	var pairs []adv5Pair
	for _, version := range []string{"v1beta1", "v1"} {
		gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: "Dial"}
		for _, typed := range []bool{false, true} {
			for _, listing := range []bool{false, true} {
				compactOpts, plainOpts := adv5Options(ns, listing, gvk), adv5Options(ns, listing)
				var in informers
				if typed {
					in = adv5InformersOf(t, adv5WidgetDialFactory(t, group, []string{version}, compactOpts),
						adv5WidgetDialFactory(t, group, []string{version}, plainOpts), gvk)
				} else {
					in = adv5InformersOf(t, newCacheFactory(t, cp.Config(), compactOpts), newCacheFactory(t, cp.Config(), plainOpts), gvk)
				}
				pairs = append(pairs, adv5Pair{name: fmt.Sprintf("%s typed=%v list=%v", version, typed, listing), gvk: gvk, in: in})
			}
		}
	}
	return pairs
}

// TestAdv5CompactCacheOfACRDServedInTwoVersions: a CRD served in v1
// (storage) and v1beta1, conversion None. Compact caches of each version,
// typed and unstructured, through a watch-list and through plain lists,
// hold field for field (apiVersion and kind included) what the default
// cache of the same version holds, read from the wire: objects created in
// either version, then, after the storage version changed to v1beta1 (the
// API server rebuilds the kind's storage and ends its watches), an update
// made in v1beta1, an object created in v1 and a delete.
func TestAdv5CompactCacheOfACRDServedInTwoVersions(t *testing.T) {
	group := adv5TwoVersionKind(t, "{strategy: None}")
	adv5TwoVersions(t, group, nil)
}

// adv5Field is the spec field that holds a Dial's size in version: size
// in v1beta1, count in v1 (the conversion webhook renames it; without a
// webhook it is just data).
func adv5Field(version string) string {
	if version == "v1" {
		return "count"
	}
	return "size"
}

// adv5TwoVersions runs the story of TestAdv5CompactCacheOfACRDServedInTwoVersions
// on the Dial kind of group, then calls after for each pair.
func adv5TwoVersions(t *testing.T, group string, after func(p adv5Pair, ns string)) {
	ns := controlplanetest.Namespace(t, cp.Config())
	dials := map[string]adv5Dials{"v1": adv5DialsIn(t, group, "v1", ns), "v1beta1": adv5DialsIn(t, group, "v1beta1", ns)}
	create := func(version, name string, size int64) {
		t.Helper()
		dials[version].create(name, map[string]any{adv5Field(version): size}, map[string]string{"made-in": version})
	}
	create("v1", "d-0", 1<<53+1)
	create("v1beta1", "d-1", 2)

	pairs := adv5Pairs(t, ns, group)
	for _, p := range pairs {
		p.in.start(t)
	}
	for _, p := range pairs {
		for _, name := range []string{"d-0", "d-1"} {
			p.check(t, ns+"/"+name)
		}
	}

	adv5StoreIn(t, group, "v1beta1")
	d0 := dials["v1beta1"].update("d-0", func(o *unstructured.Unstructured) {
		o.SetAnnotations(map[string]string{"note": "stored in v1beta1"})
	})
	create("v1", "d-2", 3)
	dials["v1"].remove("d-1")
	crd, err := apiextensionsclient.NewForConfigOrDie(cp.Config()).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "dials."+group, metav1.GetOptions{})
	if err != nil || !slices.Contains(crd.Status.StoredVersions, "v1beta1") {
		t.Fatalf("the CRD's stored versions are not v1beta1 too (%v): the storage version did not change", err)
	}
	for _, p := range pairs {
		adv5Change{ns: ns, updated: "d-0", rv: d0.GetResourceVersion(), gone: "d-1", added: "d-2"}.waitInBoth(t, p.name+": ", p.in)
		for _, name := range []string{"d-0", "d-2"} {
			p.check(t, ns+"/"+name)
		}
		// Two objects listed or streamed, and at least the update and
		// the new object watched.
		adv5WiredAtLeast(t, p.name+": ", p.in.compact, 4)
		if after != nil {
			after(p, ns)
		}
	}
}
