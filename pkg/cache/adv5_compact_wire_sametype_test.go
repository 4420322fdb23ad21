package cache_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5BothVersionsFactory is a cache factory whose scheme has one Go type,
// adv3Widget, for Dial in both v1beta1 and v1 (as operators that did not
// change their type between versions register it).
func adv5BothVersionsFactory(t *testing.T, group string, opts *cache.SharedCacheFactoryOptions) *cache.SharedCacheFactory {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"v1beta1", "v1"} {
		gv := schema.GroupVersion{Group: group, Version: version}
		s.AddKnownTypeWithName(gv.WithKind("Dial"), &adv3Widget{})
		s.AddKnownTypeWithName(gv.WithKind("DialList"), &adv3WidgetList{})
		metav1.AddToGroupVersion(s, gv)
	}
	clients, err := client.NewSharedClientFactory(cp.Config(), &client.SharedClientFactoryOptions{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cache.NewSharedCacheFactory(clients, opts)
}

// TestAdv5CompactCacheOfOneTypeInTwoVersions: one Go type registered for
// both versions of a CRD served in two; one factory holds a compact
// informer of each version, another the default ones. Each compact
// informer holds, field for field, what the default informer of its
// version holds (its version's apiVersion), read from the wire, through
// the initial objects, an update and a create.
func TestAdv5CompactCacheOfOneTypeInTwoVersions(t *testing.T) {
	group := adv5TwoVersionKind(t, "{strategy: None}")
	ns := controlplanetest.Namespace(t, cp.Config())
	v1 := dynamic.NewForConfigOrDie(cp.Config()).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "dials"}).Namespace(ns)
	create := func(name string) {
		t.Helper()
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"count": int64(1)}}}
		o.SetAPIVersion(group + "/v1")
		o.SetKind("Dial")
		o.SetName(name)
		if _, err := v1.Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("d-0")
	gvks := []schema.GroupVersionKind{{Group: group, Version: "v1beta1", Kind: "Dial"}, {Group: group, Version: "v1", Kind: "Dial"}}
	kinds := map[schema.GroupVersionKind]cache.KindOptions{}
	for _, gvk := range gvks {
		kinds[gvk] = cache.KindOptions{Compact: ptr.To(true), HotObjects: ptr.To(1)}
	}
	compactFactory := adv5BothVersionsFactory(t, group, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Kinds: kinds})
	plainFactory := adv5BothVersionsFactory(t, group, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	var pairs []adv5Pair
	for _, gvk := range gvks {
		p := adv5Pair{name: gvk.Version, gvk: gvk, in: informers{compactFactory: compactFactory, plainFactory: plainFactory}}
		var err error
		if p.in.compact, err = compactFactory.ForKind(gvk); err != nil {
			t.Fatal(err)
		}
		if p.in.plain, err = plainFactory.ForKind(gvk); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	startAndSync(t, compactFactory)
	startAndSync(t, plainFactory)
	for _, p := range pairs {
		p.check(t, ns+"/d-0")
	}
	d0, err := v1.Get(t.Context(), "d-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d0.SetLabels(map[string]string{"x": "y"})
	if d0, err = v1.Update(t.Context(), d0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	create("d-1")
	for _, p := range pairs {
		for _, inf := range []toolscache.SharedIndexInformer{p.in.compact, p.in.plain} {
			controlplanetest.Eventually(t, time.Minute, p.name+": the update and the create in both caches", func() bool {
				o, ok, _ := inf.GetStore().GetByKey(ns + "/d-0")
				_, has1, _ := inf.GetStore().GetByKey(ns + "/d-1")
				return ok && resourceVersionOf(o.(runtime.Object)) == d0.GetResourceVersion() && has1
			})
		}
		p.check(t, ns+"/d-0")
		p.check(t, ns+"/d-1")
		if n := cache.WiredObjects(p.in.compact); n < 3 {
			t.Errorf("%s: %d objects read from the wire, want at least 3", p.name, n)
		}
	}
}
