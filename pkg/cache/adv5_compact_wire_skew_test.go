package cache_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5JSONFor returns cfg with a transport that asks the server for JSON
// instead of protobuf on the requests to path (a namespace's resource)
// that are watches (watches true) or lists (false), and counts those
// answered in JSON.
func adv5JSONFor(cfg *rest.Config, path string, watches bool, n *atomic.Int64) *rest.Config {
	return adv5Wrap(cfg, func(next http.RoundTripper, r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, path) || (r.URL.Query().Get("watch") != "") != watches {
			return next.RoundTrip(r)
		}
		r = r.Clone(r.Context())
		r.Header.Set("Accept", "application/json")
		resp, err := next.RoundTrip(r)
		if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			n.Add(1)
		}
		return resp, err
	})
}

// TestAdv5CompactCacheFollowsTheServerBetweenProtobufAndJSON: the API
// server answers a compact cache of ConfigMaps (a protobuf kind) in JSON
// on its lists and in protobuf on its watches, or the other way round,
// through plain lists and through a watch-list. What the server sent in
// protobuf is read from the wire, the JSON is decoded as before; both ways
// the cache holds field for field what the default cache holds, through
// the initial objects, an update, a create and a delete.
func TestAdv5CompactCacheFollowsTheServerBetweenProtobufAndJSON(t *testing.T) {
	for _, c := range []struct {
		name         string
		jsonWatches  bool
		listing      bool
		wiredAtLeast int64 // -1: none, since nothing came in protobuf
	}{
		{"json lists", false, true, 2},       // the update and the create watched
		{"json watches", true, true, 3},      // the three listed
		{"json watch-list", true, false, -1}, // nothing in protobuf
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := controlplanetest.Namespace(t, cp.Config())
			cms := kube(t).CoreV1().ConfigMaps(ns)
			for i := range 3 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"i": fmt.Sprint(i)}},
					Data: map[string]string{"i": fmt.Sprint(i)}}
				if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var jsonRequests atomic.Int64
			cfg := adv5JSONFor(cp.Config(), "/namespaces/"+ns+"/configmaps", c.jsonWatches, &jsonRequests)
			in := adv5InformersThrough(t, cfg, cp.Config(), ns, configMapGVK, c.listing)
			in.start(t)
			for i := range 3 {
				in.sameAsPlain(t, fmt.Sprintf("%s/cm-%d", ns, i))
			}
			cm, err := cms.Get(t.Context(), "cm-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["note"] = "second"
			if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-3"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cms.Delete(t.Context(), "cm-2", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			adv5Change{ns: ns, updated: "cm-1", rv: cm.ResourceVersion, gone: "cm-2", added: "cm-3"}.waitInBoth(t, "", in)
			for _, name := range []string{"cm-0", "cm-1", "cm-3"} {
				in.sameAsPlain(t, ns+"/"+name)
			}
			if n := len(in.compact.GetStore().ListKeys()); n != 3 {
				t.Errorf("the compact cache holds %d objects, want 3", n)
			}
			if jsonRequests.Load() == 0 {
				t.Fatalf("no request was answered in JSON: the test did not provoke what it is about")
			}
			if c.wiredAtLeast < 0 {
				// Everything came in JSON: a count here would mean JSON bytes
				// were taken for protobuf.
				if n := cache.WiredObjects(in.compact); n != 0 {
					t.Errorf("%d objects read from the wire, want none: the server sent only JSON", n)
				}
			} else {
				adv5WiredAtLeast(t, "", in.compact, c.wiredAtLeast)
			}
			t.Logf("%d requests asked for JSON, %d objects read from the wire", jsonRequests.Load(), cache.WiredObjects(in.compact))
		})
	}
}

// adv5Random returns n bytes of random base64 text (S2 saves little of it).
func adv5Random(t *testing.T, n int) string {
	b := make([]byte, n*3/4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestAdv5CompactCacheKeepsObjectsLargerThanItsBuffers: objects near the
// API server's size limit (about 900 KB) next to tiny ones, compressible
// and not, ConfigMaps (protobuf, random binaryData) and custom resources
// (JSON, a preserve-unknown CRD), through a watch-list or plain lists and
// then updates that swap their sizes (the buffers a large object grew are
// reused for small ones and the other way round): every object is field
// for field the default cache's.
func TestAdv5CompactCacheKeepsObjectsLargerThanItsBuffers(t *testing.T) {
	dir, gizmoGVK, gizmoGVR, err := testkinds.NewLateKind(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
		t.Fatal(err)
	}
	for _, listing := range []bool{false, true} {
		t.Run(fmt.Sprintf("configmaps/list=%v", listing), func(t *testing.T) { adv5BigConfigMaps(t, listing) })
		t.Run(fmt.Sprintf("custom resources/list=%v", listing), func(t *testing.T) {
			adv5BigCustomResources(t, gizmoGVK, gizmoGVR, listing)
		})
	}
}

// adv5Big is the size of the large objects: about 900 KB, under the API
// server's and etcd's limits.
const adv5Big = 900 << 10

// adv5BigConfigMaps is TestAdv5CompactCacheKeepsObjectsLargerThanItsBuffers
// for ConfigMaps.
func adv5BigConfigMaps(t *testing.T, listing bool) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := kube(t).CoreV1().ConfigMaps(ns)
	random := make([]byte, adv5Big)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	objs := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "text"}, Data: map[string]string{"t": strings.Repeat("abcdefgh", adv5Big/8)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "tiny"}, Data: map[string]string{"t": "x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "random"}, BinaryData: map[string][]byte{"r": random}},
	}
	for _, o := range objs {
		if _, err := cms.Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := adv5InformersThrough(t, cp.Config(), cp.Config(), ns, configMapGVK, listing)
	in.start(t)
	for _, o := range objs {
		in.sameAsPlain(t, ns+"/"+o.Name)
	}
	// Swap: tiny grows to random data, random shrinks to a byte.
	tiny, err := cms.Get(t.Context(), "tiny", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tiny.BinaryData = map[string][]byte{"r": random[:adv5Big-1]}
	if _, err := cms.Update(t.Context(), tiny, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := cms.Get(t.Context(), "random", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.BinaryData = map[string][]byte{"r": {1}}
	if r, err = cms.Update(t.Context(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	adv5Caught(t, in, ns+"/random", r.ResourceVersion)
	for _, o := range objs {
		in.sameAsPlain(t, ns+"/"+o.Name)
	}
	adv5WiredAtLeast(t, "", in.compact, 5)
}

// adv5BigCustomResources is TestAdv5CompactCacheKeepsObjectsLargerThanItsBuffers
// for custom resources of gvk (a preserve-unknown CRD).
func adv5BigCustomResources(t *testing.T, gizmoGVK schema.GroupVersionKind, gizmoGVR schema.GroupVersionResource, listing bool) {
	ns := controlplanetest.Namespace(t, cp.Config())
	gizmos := dynamic.NewForConfigOrDie(cp.Config()).Resource(gizmoGVR).Namespace(ns)
	names := []string{"random", "tiny", "escaped"}
	specs := []map[string]any{
		{"r": adv5Random(t, adv5Big)},
		{"r": "x"},
		{"e": strings.Repeat("<\"é\\\u2028>", adv5Big/16)},
	}
	for i, name := range names {
		o := testkinds.Object(gizmoGVK, ns, name)
		o.Object["spec"] = specs[i]
		if _, err := gizmos.Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := adv5InformersThrough(t, cp.Config(), cp.Config(), ns, gizmoGVK, listing)
	in.start(t)
	for _, name := range names {
		in.sameAsPlain(t, ns+"/"+name)
	}
	for i, spec := range []map[string]any{{"r": "y"}, specs[0]} {
		o, err := gizmos.Get(t.Context(), names[i], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o.Object["spec"] = spec
		if o, err = gizmos.Update(t.Context(), o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		adv5Caught(t, in, ns+"/"+names[i], o.GetResourceVersion())
	}
	for _, name := range names {
		in.sameAsPlain(t, ns+"/"+name)
	}
	adv5WiredAtLeast(t, "", in.compact, 5)
}

// adv5Caught waits until the compact cache has key at resourceVersion rv.
func adv5Caught(t *testing.T, in informers, key, rv string) {
	t.Helper()
	controlplanetest.Eventually(t, time.Minute, key+" updated in the compact cache", func() bool {
		o, ok, _ := in.compact.GetStore().GetByKey(key)
		return ok && resourceVersionOf(o.(runtime.Object)) == rv
	})
}
