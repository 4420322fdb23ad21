package cache_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5ServedFrom returns cfg with a transport that sends the requests for
// from's path to to's instead (a proxy or an aggregation layer that serves
// another version than asked for), and counts them.
func adv5ServedFrom(cfg *rest.Config, from, to string, n *atomic.Int64) *rest.Config {
	return adv5Wrap(cfg, func(next http.RoundTripper, r *http.Request) (*http.Response, error) {
		if strings.Contains(r.URL.Path, from) {
			r = r.Clone(r.Context())
			r.URL.Path = strings.Replace(r.URL.Path, from, to, 1)
			n.Add(1)
		}
		return next.RoundTrip(r)
	})
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
			v1 := adv5DialsIn(t, group, "v1", ns)
			v1.create("d-0", map[string]any{"count": int64(1)}, nil)
			v1.create("d-1", map[string]any{"count": int64(1)}, nil)
			var rewritten atomic.Int64
			cfg := adv5ServedFrom(cp.Config(), "/apis/"+group+"/v1beta1/", "/apis/"+group+"/v1/", &rewritten)
			gvk := schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "Dial"}
			in := adv5InformersThrough(t, cfg, cfg, ns, gvk, listing)
			in.start(t)
			for _, name := range []string{"d-0", "d-1"} {
				in.sameAsPlain(t, ns+"/"+name)
			}
			d0 := v1.update("d-0", func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"x": "y"}) })
			v1.create("d-2", map[string]any{"count": int64(1)}, nil)
			v1.remove("d-1")
			adv5Change{ns: ns, updated: "d-0", rv: d0.GetResourceVersion(), gone: "d-1", added: "d-2"}.waitInBoth(t, "", in)
			for _, name := range []string{"d-0", "d-2"} {
				if adv5HasManagedFields(in.sameAsPlain(t, ns+"/"+name)) {
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
