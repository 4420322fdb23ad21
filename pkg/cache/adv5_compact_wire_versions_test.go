package cache_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5TwoVersionKind installs a CRD "Dial" in a group of its own, served
// in v1 (storage) and v1beta1, with conversion (a YAML flow mapping), and
// returns its group.
func adv5TwoVersionKind(t *testing.T, conversion string) string {
	t.Helper()
	group := fmt.Sprintf("dials%d.lariat.dev", time.Now().UnixNano())
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dials.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: dials, singular: dial, kind: Dial, listKind: DialList}
  conversion: %[2]s
  versions:
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, group, conversion)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dials.yaml"), []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
		t.Fatal(err)
	}
	return group
}

// adv5StoreIn makes version the CRD's storage version.
func adv5StoreIn(t *testing.T, group, version string) {
	t.Helper()
	crds := apiextensionsclient.NewForConfigOrDie(cp.Config()).ApiextensionsV1().CustomResourceDefinitions()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(t.Context(), "dials."+group, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		_, err = crds.Update(t.Context(), crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// adv5TypedDialFactory is a cache factory whose scheme has adv3Widget (a
// typed Go type, free-form spec) as the Dial kind of gvk's version only.
func adv5TypedDialFactory(t *testing.T, gvk schema.GroupVersionKind, opts *cache.SharedCacheFactoryOptions) *cache.SharedCacheFactory {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypeWithName(gvk, &adv3Widget{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind("DialList"), &adv3WidgetList{})
	metav1.AddToGroupVersion(s, gvk.GroupVersion())
	clients, err := client.NewSharedClientFactory(cp.Config(), &client.SharedClientFactoryOptions{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cache.NewSharedCacheFactory(clients, opts)
}

// adv5Pair is a compact and a default informer of one version of Dial.
type adv5Pair struct {
	name string
	gvk  schema.GroupVersionKind
	in   informers
}

func adv5Pairs(t *testing.T, ns, group string) []adv5Pair {
	t.Helper()
	var pairs []adv5Pair
	for _, version := range []string{"v1beta1", "v1"} {
		gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: "Dial"}
		for _, typed := range []bool{false, true} {
			for _, listing := range []bool{false, true} {
				p := adv5Pair{name: fmt.Sprintf("%s typed=%v list=%v", version, typed, listing), gvk: gvk}
				def := cache.Options{Namespace: ns, NoWatchList: listing}
				compactOpts := &cache.SharedCacheFactoryOptions{Default: def,
					Kinds: map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}}}
				plainOpts := &cache.SharedCacheFactoryOptions{Default: def}
				if typed {
					p.in.compactFactory = adv5TypedDialFactory(t, gvk, compactOpts)
					p.in.plainFactory = adv5TypedDialFactory(t, gvk, plainOpts)
				} else {
					p.in.compactFactory = newCacheFactory(t, cp.Config(), compactOpts)
					p.in.plainFactory = newCacheFactory(t, cp.Config(), plainOpts)
				}
				var err error
				if p.in.compact, err = p.in.compactFactory.ForKind(gvk); err != nil {
					t.Fatal(err)
				}
				if p.in.plain, err = p.in.plainFactory.ForKind(gvk); err != nil {
					t.Fatal(err)
				}
				pairs = append(pairs, p)
			}
		}
	}
	return pairs
}

// check fails the test unless key is, in the compact cache, the default
// cache's object (apiVersion and kind included), in the pair's version.
func (p adv5Pair) check(t *testing.T, key string) {
	t.Helper()
	got := p.in.sameAsPlain(t, key)
	if v := got.GetObjectKind().GroupVersionKind(); v != p.gvk {
		t.Errorf("%s: %s read from the compact cache is a %v", p.name, key, v)
	}
	if u, ok := got.(*unstructured.Unstructured); ok && u.GetManagedFields() != nil {
		t.Errorf("%s: %s read from the compact cache has managedFields", p.name, key)
	}
	if w, ok := got.(*adv3Widget); ok && w.ManagedFields != nil {
		t.Errorf("%s: %s read from the compact cache has managedFields", p.name, key)
	}
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
	dyn := dynamic.NewForConfigOrDie(cp.Config())
	in := func(version string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: "dials"}).Namespace(ns)
	}
	create := func(version, name string, size int64) {
		t.Helper()
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{adv5Field(version): size}}}
		o.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: "Dial"})
		o.SetName(name)
		o.SetLabels(map[string]string{"made-in": version})
		if _, err := in(version).Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
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
	d0, err := in("v1beta1").Get(t.Context(), "d-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d0.SetAnnotations(map[string]string{"note": "stored in v1beta1"})
	if d0, err = in("v1beta1").Update(t.Context(), d0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	create("v1", "d-2", 3)
	if err := in("v1").Delete(t.Context(), "d-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	crd, err := apiextensionsclient.NewForConfigOrDie(cp.Config()).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "dials."+group, metav1.GetOptions{})
	if err != nil || !slices.Contains(crd.Status.StoredVersions, "v1beta1") {
		t.Fatalf("the CRD's stored versions are not v1beta1 too (%v): the storage version did not change", err)
	}
	for _, p := range pairs {
		controlplanetest.Eventually(t, 2*time.Minute, p.name+": the changes in both caches", func() bool {
			for _, inf := range []toolscache.SharedIndexInformer{p.in.compact, p.in.plain} {
				s := inf.GetStore()
				d, ok, _ := s.GetByKey(ns + "/d-0")
				_, has1, _ := s.GetByKey(ns + "/d-1")
				_, has2, _ := s.GetByKey(ns + "/d-2")
				if !ok || resourceVersionOf(d.(runtime.Object)) != d0.GetResourceVersion() || has1 || !has2 {
					return false
				}
			}
			return true
		})
		for _, name := range []string{"d-0", "d-2"} {
			p.check(t, ns+"/"+name)
		}
		// Two objects listed or streamed, and at least the update and
		// the new object watched.
		if n := cache.WiredObjects(p.in.compact); n < 4 {
			t.Errorf("%s: %d objects read from the wire, want at least 4", p.name, n)
		}
		if after != nil {
			after(p, ns)
		}
	}
}
