package cache_test

// The helpers the adv5 tests share: transports that change what the
// client asks or gets, the caches each test compares (a compact one and,
// for reference, the default one), the objects they write and the checks
// they make. Each test file keeps what only its story needs.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5RoundTripper is an http.RoundTripper made of a function.
type adv5RoundTripper func(*http.Request) (*http.Response, error)

func (f adv5RoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// adv5Wrap returns a copy of cfg whose requests all go through f, which is
// given the transport under it to send them on (changed or not).
func adv5Wrap(cfg *rest.Config, f func(next http.RoundTripper, r *http.Request) (*http.Response, error)) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return adv5RoundTripper(func(r *http.Request) (*http.Response, error) { return f(next, r) })
	}
	return cfg
}

// adv5OwnControlPlane starts a control plane for the test alone, whose API
// server runs without a watch cache: lists and watches are served from
// etcd, so a revision compacted away is gone for real.
func adv5OwnControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	return controlplanetest.Start(t, controlplane.Options{
		CRDDirs:        []string{testkinds.CRDDir()},
		APIServerFlags: []string{"--watch-cache=false"},
	})
}

// adv5CompactEtcd compacts etcd at its current revision through its JSON
// gateway.
func adv5CompactEtcd(t *testing.T, etcdURL string) {
	var rev struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	adv5Etcd(t, etcdURL+"/v3/kv/range", `{"key":"Lw=="}`, &rev)
	adv5Etcd(t, etcdURL+"/v3/kv/compaction", fmt.Sprintf(`{"revision":%q,"physical":true}`, rev.Header.Revision), nil)
}

// adv5Etcd posts body to the etcd gateway's url and decodes the answer
// into out (unless nil).
func adv5Etcd(t *testing.T, url, body string, out any) {
	resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Errorf("etcd %s: %v", url, err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("etcd %s: %s: %s", url, resp.Status, b)
		return
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Errorf("etcd %s: %v", url, err)
		}
	}
}

// adv5Resource is the resource of gvk, a ConfigMap or a Widget.
func adv5Resource(gvk schema.GroupVersionKind) string {
	if gvk == testkinds.WidgetGVK {
		return testkinds.WidgetGVR.Resource
	}
	return "configmaps"
}

// adv5Object is a ConfigMap or a Widget (gvk) named name in ns, with
// labels, that holds note: in its data (a ConfigMap) or as its size.
func adv5Object(gvk schema.GroupVersionKind, ns, name string, note int64, labels map[string]string) *unstructured.Unstructured {
	o := testkinds.Object(gvk, ns, name)
	if gvk == testkinds.WidgetGVK {
		o = testkinds.Widget(ns, name, note)
	} else {
		o.Object["data"] = map[string]any{"note": fmt.Sprint(note)}
	}
	o.SetLabels(labels)
	return o
}

// adv5Options is the options of a cache factory over namespace ns only
// (other tests' objects stay out), with a watch-list or, when listing,
// plain lists. The kinds in compact are compact and keep only one object
// decoded, so that reads decode.
func adv5Options(ns string, listing bool, compact ...schema.GroupVersionKind) *cache.SharedCacheFactoryOptions {
	opts := &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, NoWatchList: listing}}
	for _, gvk := range compact {
		if opts.Kinds == nil {
			opts.Kinds = map[schema.GroupVersionKind]cache.KindOptions{}
		}
		opts.Kinds[gvk] = cache.KindOptions{Compact: ptr.To(true), HotObjects: ptr.To(1)}
	}
	return opts
}

// adv5ForKind is f's informer of gvk.
func adv5ForKind(t *testing.T, f *cache.SharedCacheFactory, gvk schema.GroupVersionKind) toolscache.SharedIndexInformer {
	t.Helper()
	inf, err := f.ForKind(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return inf
}

// adv5InformersOf is the informers of gvk of a compact factory and of a
// default one.
func adv5InformersOf(t *testing.T, compactFactory, plainFactory *cache.SharedCacheFactory, gvk schema.GroupVersionKind) informers {
	t.Helper()
	return informers{
		compactFactory: compactFactory, compact: adv5ForKind(t, compactFactory, gvk),
		plainFactory: plainFactory, plain: adv5ForKind(t, plainFactory, gvk),
	}
}

// adv5InformersThrough is a compact informer of gvk whose requests go
// through compactCfg and a default one through plainCfg, over ns, with a
// watch-list or, when listing, plain lists.
func adv5InformersThrough(t *testing.T, compactCfg, plainCfg *rest.Config, ns string, gvk schema.GroupVersionKind, listing bool) informers {
	t.Helper()
	return adv5InformersOf(t, newCacheFactory(t, compactCfg, adv5Options(ns, listing, gvk)),
		newCacheFactory(t, plainCfg, adv5Options(ns, listing)), gvk)
}

// adv5Change is what a test changed in namespace ns: the object updated
// now at resourceVersion rv, the one gone deleted and the one added
// created (names; "" where the test made no such change).
type adv5Change struct {
	ns, updated, rv, gone, added string
}

// heldBy reports whether inf's store has the change.
func (c adv5Change) heldBy(inf toolscache.SharedIndexInformer) bool {
	s := inf.GetStore()
	if c.updated != "" {
		o, ok, _ := s.GetByKey(c.ns + "/" + c.updated)
		if !ok || resourceVersionOf(o.(runtime.Object)) != c.rv {
			return false
		}
	}
	if c.gone != "" {
		if _, ok, _ := s.GetByKey(c.ns + "/" + c.gone); ok {
			return false
		}
	}
	if c.added != "" {
		if _, ok, _ := s.GetByKey(c.ns + "/" + c.added); !ok {
			return false
		}
	}
	return true
}

// waitInBoth waits until the compact and the default cache of in both
// hold the change.
func (c adv5Change) waitInBoth(t *testing.T, what string, in informers) {
	t.Helper()
	controlplanetest.Eventually(t, 2*time.Minute, what+"the changes in both caches", func() bool {
		return c.heldBy(in.compact) && c.heldBy(in.plain)
	})
}

// adv5HasManagedFields reports whether o, read from a cache, has
// managedFields (the default cache strips them; so must the compact one).
func adv5HasManagedFields(o runtime.Object) bool {
	m, err := meta.Accessor(o)
	return err == nil && m.GetManagedFields() != nil
}

// adv5WiredAtLeast fails the test unless the compact informer inf read at
// least want objects from the wire (what the test is about: a cache that
// decoded them all the old way would hold the same objects).
func adv5WiredAtLeast(t *testing.T, what string, inf toolscache.SharedIndexInformer, want int64) {
	t.Helper()
	if n := cache.WiredObjects(inf); n < want {
		t.Errorf("%s%d objects read from the wire, want at least %d", what, n, want)
	}
}

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

// adv5Dials reads and writes the Dials of one group in one namespace
// through one version.
type adv5Dials struct {
	dynamic.ResourceInterface
	t   *testing.T
	gvk schema.GroupVersionKind
}

func adv5DialsIn(t *testing.T, group, version, ns string) adv5Dials {
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: "Dial"}
	objects := dynamic.NewForConfigOrDie(cp.Config()).Resource(gvk.GroupVersion().WithResource("dials")).Namespace(ns)
	return adv5Dials{ResourceInterface: objects, t: t, gvk: gvk}
}

// create creates the Dial name with spec and labels.
func (d adv5Dials) create(name string, spec map[string]any, labels map[string]string) {
	d.t.Helper()
	o := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	o.SetGroupVersionKind(d.gvk)
	o.SetName(name)
	o.SetLabels(labels)
	if _, err := d.Create(d.t.Context(), o, metav1.CreateOptions{}); err != nil {
		d.t.Fatal(err)
	}
}

// update reads the Dial name, changes it and writes it back; it returns
// the Dial the server stored.
func (d adv5Dials) update(name string, change func(*unstructured.Unstructured)) *unstructured.Unstructured {
	d.t.Helper()
	o, err := d.Get(d.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	change(o)
	if o, err = d.Update(d.t.Context(), o, metav1.UpdateOptions{}); err != nil {
		d.t.Fatal(err)
	}
	return o
}

func (d adv5Dials) remove(name string) {
	d.t.Helper()
	if err := d.Delete(d.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		d.t.Fatal(err)
	}
}

// adv5WidgetDialFactory is a cache factory whose scheme has one Go type,
// adv3Widget (typed, free-form spec), as the Dial kind of group in each
// of versions (as operators that did not change their type between
// versions register it).
func adv5WidgetDialFactory(t *testing.T, group string, versions []string, opts *cache.SharedCacheFactoryOptions) *cache.SharedCacheFactory {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, version := range versions {
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

// adv5Pair is a compact and a default informer of one version of Dial.
type adv5Pair struct {
	name string
	gvk  schema.GroupVersionKind
	in   informers
}

// check fails the test unless key is, in the compact cache, the default
// cache's object (apiVersion and kind included), in the pair's version.
func (p adv5Pair) check(t *testing.T, key string) {
	t.Helper()
	got := p.in.sameAsPlain(t, key)
	if v := got.GetObjectKind().GroupVersionKind(); v != p.gvk {
		t.Errorf("%s: %s read from the compact cache is a %v", p.name, key, v)
	}
	if adv5HasManagedFields(got) {
		t.Errorf("%s: %s read from the compact cache has managedFields", p.name, key)
	}
}
