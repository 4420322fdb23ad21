package cache_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv5CompactCacheOfOneTypeInTwoVersions: one Go type registered for
// both versions of a CRD served in two; one factory holds a compact
// informer of each version, another the default ones. Each compact
// informer holds, field for field, what the default informer of its
// version holds (its version's apiVersion), read from the wire, through
// the initial objects, an update and a create.
func TestAdv5CompactCacheOfOneTypeInTwoVersions(t *testing.T) {
	group := adv5TwoVersionKind(t, "{strategy: None}")
	ns := controlplanetest.Namespace(t, cp.Config())
	v1 := adv5DialsIn(t, group, "v1", ns)
	v1.create("d-0", map[string]any{"count": int64(1)}, nil)
	versions := []string{"v1beta1", "v1"}
	var gvks []schema.GroupVersionKind
	for _, version := range versions {
		gvks = append(gvks, schema.GroupVersionKind{Group: group, Version: version, Kind: "Dial"})
	}
	compactFactory := adv5WidgetDialFactory(t, group, versions, adv5Options(ns, false, gvks...))
	plainFactory := adv5WidgetDialFactory(t, group, versions, adv5Options(ns, false))
	var pairs []adv5Pair
	for _, gvk := range gvks {
		pairs = append(pairs, adv5Pair{name: gvk.Version, gvk: gvk, in: adv5InformersOf(t, compactFactory, plainFactory, gvk)})
	}
	startAndSync(t, compactFactory)
	startAndSync(t, plainFactory)
	for _, p := range pairs {
		p.check(t, ns+"/d-0")
	}
	d0 := v1.update("d-0", func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"x": "y"}) })
	v1.create("d-1", map[string]any{"count": int64(1)}, nil)
	for _, p := range pairs {
		adv5Change{ns: ns, updated: "d-0", rv: d0.GetResourceVersion(), added: "d-1"}.waitInBoth(t, p.name+": ", p.in)
		p.check(t, ns+"/d-0")
		p.check(t, ns+"/d-1")
		adv5WiredAtLeast(t, p.name+": ", p.in.compact, 3)
	}
}
