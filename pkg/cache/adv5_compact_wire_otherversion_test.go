package cache_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5ServedFrom returns cfg with a transport that sends the requests for
// from's path to to's instead (a proxy or an aggregation layer that serves
// another version than asked for), and counts them.
func adv5ServedFrom(cfg *rest.Config, from, to string, n *atomic.Int64) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return adv5RoundTripper(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, from) {
				r = r.Clone(r.Context())
				r.URL.Path = strings.Replace(r.URL.Path, from, to, 1)
				n.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

// TestAdv5CompactCacheOfObjectsInAnotherVersionThanAsked: an informer of
// Dial v1beta1 whose requests are answered with v1 objects (the transport
// sends them to the v1 path): apiVersion on the wire is not the informer's.
// The compact cache reads none of them from the wire and holds field for
// field what a default cache behind the same transport holds, through the
// list or watch-list, an update, a create and a delete.
func TestAdv5CompactCacheOfObjectsInAnotherVersionThanAsked(t *testing.T) {
	group := adv5TwoVersionKind(t, "{strategy: None}")
	for _, listing := range []bool{false, true} {
		t.Run(fmt.Sprintf("list=%v", listing), func(t *testing.T) {
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
			create("d-1")
			var rewritten atomic.Int64
			cfg := adv5ServedFrom(cp.Config(), "/apis/"+group+"/v1beta1/", "/apis/"+group+"/v1/", &rewritten)
			gvk := schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "Dial"}
			def := cache.Options{Namespace: ns, NoWatchList: listing}
			var in informers
			in.compactFactory = newCacheFactory(t, cfg, &cache.SharedCacheFactoryOptions{Default: def,
				Kinds: map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}}})
			in.plainFactory = newCacheFactory(t, cfg, &cache.SharedCacheFactoryOptions{Default: def})
			var err error
			if in.compact, err = in.compactFactory.ForKind(gvk); err != nil {
				t.Fatal(err)
			}
			if in.plain, err = in.plainFactory.ForKind(gvk); err != nil {
				t.Fatal(err)
			}
			in.start(t)
			for _, name := range []string{"d-0", "d-1"} {
				in.sameAsPlain(t, ns+"/"+name)
			}
			d0, err := v1.Get(t.Context(), "d-0", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d0.SetLabels(map[string]string{"x": "y"})
			if d0, err = v1.Update(t.Context(), d0, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			create("d-2")
			if err := v1.Delete(t.Context(), "d-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, inf := range []toolscache.SharedIndexInformer{in.compact, in.plain} {
				controlplanetest.Eventually(t, time.Minute, "the changes in both caches", func() bool {
					s := inf.GetStore()
					_, has1, _ := s.GetByKey(ns + "/d-1")
					_, has2, _ := s.GetByKey(ns + "/d-2")
					o, ok, _ := s.GetByKey(ns + "/d-0")
					return ok && o.(*unstructured.Unstructured).GetResourceVersion() == d0.GetResourceVersion() && !has1 && has2
				})
			}
			for _, name := range []string{"d-0", "d-2"} {
				if got := in.sameAsPlain(t, ns+"/"+name).(*unstructured.Unstructured); got.GetManagedFields() != nil {
					t.Errorf("%s read from the compact cache has managedFields", name)
				}
			}
			if rewritten.Load() == 0 {
				t.Fatal("no request was sent to the other version: the test did not provoke what it is about")
			}
			if n := cache.WiredObjects(in.compact); n != 0 {
				t.Errorf("%d objects of another version than the informer's read from the wire, want none", n)
			}
		})
	}
}
