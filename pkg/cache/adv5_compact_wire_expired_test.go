package cache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5Expirer sits in a client's transport. While armed, it asks the
// server for small pages (limit 2) on the lists of one resource in one
// namespace, and before the request for the next page (a continue token)
// it runs between (a change made between pages) and compacts etcd past
// the first page's revision, so that the real API server answers that
// page 410 Gone. It records the status of every continued page, and
// counts the whole lists asked for after it.
type adv5Expirer struct {
	t        *testing.T
	etcdURL  string
	path     string // ".../namespaces/<ns>/<resource>"
	between  func()
	mu       sync.Mutex
	armed    bool
	statuses []int
	relists  int
}

func (e *adv5Expirer) arm() {
	e.mu.Lock()
	e.armed = true
	e.mu.Unlock()
}

// continued returns the statuses of the continued pages so far.
func (e *adv5Expirer) continued() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.statuses)
}

func (e *adv5Expirer) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return adv5RoundTripper(func(r *http.Request) (*http.Response, error) {
			q := r.URL.Query()
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, e.path) || q.Get("watch") != "" {
				return rt.RoundTrip(r)
			}
			e.mu.Lock()
			armed := e.armed
			if !armed && len(e.statuses) > 0 && q.Get("continue") == "" {
				e.relists++
			}
			e.mu.Unlock()
			if !armed {
				return rt.RoundTrip(r)
			}
			if q.Get("continue") == "" {
				q.Set("limit", "2")
				r = r.Clone(r.Context())
				r.URL.RawQuery = q.Encode()
				return rt.RoundTrip(r)
			}
			e.mu.Lock()
			e.armed = false
			e.mu.Unlock()
			e.between()
			e.compact()
			resp, err := rt.RoundTrip(r)
			e.mu.Lock()
			if err == nil {
				e.statuses = append(e.statuses, resp.StatusCode)
			}
			e.mu.Unlock()
			return resp, err
		})
	}
	return cfg
}

// compact compacts etcd at its current revision through its JSON gateway.
func (e *adv5Expirer) compact() {
	var rev struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	e.etcd("/v3/kv/range", `{"key":"Lw=="}`, &rev)
	e.etcd("/v3/kv/compaction", fmt.Sprintf(`{"revision":%q,"physical":true}`, rev.Header.Revision), nil)
}

func (e *adv5Expirer) etcd(path, body string, out any) {
	resp, err := http.Post(e.etcdURL+path, "application/json", bytes.NewBufferString(body))
	if err != nil {
		e.t.Errorf("etcd %s: %v", path, err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Errorf("etcd %s: %s: %s", path, resp.Status, b)
		return
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Errorf("etcd %s: %v", path, err)
		}
	}
}

type adv5RoundTripper func(*http.Request) (*http.Response, error)

func (f adv5RoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAdv5CompactCacheRelistsWholeWhenAContinueTokenExpires: a compact
// cache that lists in pages (no watch-list), reading them from the wire,
// gets a real 410 Gone for its second page (etcd compacted past the first
// page's revision; the API server runs without a watch cache, so lists
// are served from etcd). Between the pages one object of the first page is
// deleted and one is created. The cache must end up holding exactly what
// the server holds (none of the half list's objects kept, none lost),
// field for field what a default cache holds; on a relist of an informer
// that held the objects (a restart of its factory), the deleted object's
// end must reach its handler and the new object's add too. ConfigMaps
// (protobuf) and unstructured custom resources (JSON).
func TestAdv5CompactCacheRelistsWholeWhenAContinueTokenExpires(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{
		CRDDirs:        []string{testkinds.CRDDir()},
		APIServerFlags: []string{"--watch-cache=false"},
	})
	kinds := []struct {
		gvk      schema.GroupVersionKind
		resource string
		example  runtime.Object
	}{
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", &corev1.ConfigMap{}},
		{testkinds.WidgetGVK, testkinds.WidgetGVR.Resource, &unstructured.Unstructured{}},
	}
	for _, k := range kinds {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/restart=%v", k.resource, restart), func(t *testing.T) {
				adv5ExpiredContinue(t, own, k.gvk, k.resource, k.example, restart)
			})
		}
	}
}

func adv5ExpiredContinue(t *testing.T, own *controlplane.ControlPlane, gvk schema.GroupVersionKind, resource string, example runtime.Object, restart bool) {
	ns := controlplanetest.Namespace(t, own.Config())
	gvr := gvk.GroupVersion().WithResource(resource)
	objects := dynamic.NewForConfigOrDie(own.Config()).Resource(gvr).Namespace(ns)
	create := func(name string) {
		t.Helper()
		o := testkinds.Object(gvk, ns, name)
		o.SetLabels(map[string]string{"app": "shop"})
		if gvk == testkinds.WidgetGVK {
			o = testkinds.Widget(ns, name, 7)
		} else {
			o.Object["data"] = map[string]any{"name": name}
		}
		if _, err := objects.Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		create(fmt.Sprintf("o-%d", i))
	}
	e := &adv5Expirer{t: t, etcdURL: own.EtcdURL(), path: "/namespaces/" + ns + "/" + resource}
	e.between = func() {
		// o-0 was on the first page (names come in order).
		if err := objects.Delete(context.Background(), "o-0", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
		create("o-new")
	}
	compactFactory := newCacheFactory(t, e.wrap(own.Config()), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, NoWatchList: true},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}},
	})
	compact, err := compactFactory.ForKind(gvk)
	if err != nil {
		t.Fatal(err)
	}
	log := newEventLog()
	if _, err := compact.AddEventHandler(log.handler(example)); err != nil {
		t.Fatal(err)
	}
	if restart {
		stop := startSynced(t, compactFactory)
		controlplanetest.Eventually(t, time.Minute, "the six objects added", func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			return len(log.adds) == 6
		})
		stop()
		controlplanetest.Eventually(t, time.Minute, "the compact informer to stop", compact.IsStopped)
	}
	e.arm()
	startSynced(t, compactFactory)
	controlplanetest.Eventually(t, time.Minute, "the continued page answered", func() bool { return len(e.continued()) > 0 })
	if got := e.continued(); got[0] != http.StatusGone {
		t.Fatalf("the continued page was answered %v, want 410 Gone: the test did not provoke what it is about", got)
	}
	adv5HoldsTheWholeList(t, own, ns, gvk, compact, log, restart)
	e.mu.Lock()
	relists := e.relists
	e.mu.Unlock()
	if relists != 1 {
		// client-go's pager lists again whole after the 410; a rebuild of
		// the informer on top of it (seen before) lists a second time.
		t.Errorf("the kind was listed whole %d times after the 410, want once (the pager's)", relists)
	}
	t.Logf("continued pages answered %v; %d objects read from the wire", e.continued(), cache.WiredObjects(compact))
}

// adv5HoldsTheWholeList fails the test unless compact, after the expired
// continue, holds exactly o-1..o-5 and o-new, field for field what a
// default cache holds, and its handler was told of o-new and (after a
// restart, when it had been told of o-0) of o-0's end.
func adv5HoldsTheWholeList(t *testing.T, own *controlplane.ControlPlane, ns string, gvk schema.GroupVersionKind,
	compact toolscache.SharedIndexInformer, log *eventLog, restart bool) {
	t.Helper()
	plainFactory := newCacheFactory(t, own.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, NoWatchList: true}})
	plain, err := plainFactory.ForKind(gvk)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, plainFactory)
	in := informers{compact: compact, plain: plain, plainFactory: plainFactory}
	want := []string{ns + "/o-1", ns + "/o-2", ns + "/o-3", ns + "/o-4", ns + "/o-5", ns + "/o-new"}
	controlplanetest.Eventually(t, time.Minute, "the compact cache to hold what the server holds", func() bool {
		keys := compact.GetStore().ListKeys()
		slices.Sort(keys)
		return slices.Equal(keys, want)
	})
	for _, key := range want {
		in.sameAsPlain(t, key)
	}
	controlplanetest.Eventually(t, time.Minute, "the handler told of o-new", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.adds[ns+"/o-new"] != nil
	})
	if restart {
		controlplanetest.Eventually(t, time.Minute, "the handler told o-0 is gone", func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			return log.deletes[ns+"/o-0"] != nil
		})
	}
	// Whatever the handler was told last of o-0 is its end (never an add
	// after it), and the store does not hold it (checked above).
	log.mu.Lock()
	defer log.mu.Unlock()
	if !restart && log.adds[ns+"/o-0"] != nil && log.deletes[ns+"/o-0"] == nil {
		t.Errorf("the handler was told of o-0, deleted before the list ended, and never of its end")
	}
	if len(log.bad) > 0 {
		t.Errorf("the handler was given objects of other types: %v", log.bad)
	}
	if n := cache.WiredObjects(compact); n < 6 {
		t.Errorf("%d objects read from the wire, want at least the 6 of the whole list", n)
	}
}
