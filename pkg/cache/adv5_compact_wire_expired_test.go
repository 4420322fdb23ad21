package cache_test

import (
	"context"
	"fmt"
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

func (e *adv5Expirer) wrap(cfg *rest.Config) *rest.Config { return adv5Wrap(cfg, e.roundTrip) }

// roundTrip sends r on through next, as the type's comment says.
func (e *adv5Expirer) roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	q := r.URL.Query()
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, e.path) || q.Get("watch") != "" {
		return next.RoundTrip(r)
	}
	e.mu.Lock()
	armed := e.armed
	if !armed && len(e.statuses) > 0 && q.Get("continue") == "" {
		e.relists++
	}
	e.mu.Unlock()
	if !armed {
		return next.RoundTrip(r)
	}
	if q.Get("continue") == "" {
		q.Set("limit", "2")
		r = r.Clone(r.Context())
		r.URL.RawQuery = q.Encode()
		return next.RoundTrip(r)
	}
	e.mu.Lock()
	e.armed = false
	e.mu.Unlock()
	e.between()
	adv5CompactEtcd(e.t, e.etcdURL)
	resp, err := next.RoundTrip(r)
	e.mu.Lock()
	if err == nil {
		e.statuses = append(e.statuses, resp.StatusCode)
	}
	e.mu.Unlock()
	return resp, err
}

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
	own := adv5OwnControlPlane(t)
	kinds := []struct {
		gvk     schema.GroupVersionKind
		example runtime.Object
	}{
		{configMapGVK, &corev1.ConfigMap{}},
		{testkinds.WidgetGVK, &unstructured.Unstructured{}},
	}
	for _, k := range kinds {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/restart=%v", adv5Resource(k.gvk), restart), func(t *testing.T) {
				adv5ExpiredContinue(t, own, k.gvk, k.example, restart)
			})
		}
	}
}

func adv5ExpiredContinue(t *testing.T, own *controlplane.ControlPlane, gvk schema.GroupVersionKind, example runtime.Object, restart bool) {
	ns := controlplanetest.Namespace(t, own.Config())
	resource := adv5Resource(gvk)
	objects := dynamic.NewForConfigOrDie(own.Config()).Resource(gvk.GroupVersion().WithResource(resource)).Namespace(ns)
	create := func(name string) {
		t.Helper()
		if _, err := objects.Create(t.Context(), adv5Object(gvk, ns, name, 7, map[string]string{"app": "shop"}), metav1.CreateOptions{}); err != nil {
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
	compactFactory := newCacheFactory(t, e.wrap(own.Config()), adv5Options(ns, true, gvk))
	compact := adv5ForKind(t, compactFactory, gvk)
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
	plainFactory := newCacheFactory(t, own.Config(), adv5Options(ns, true))
	in := informers{compact: compact, plain: adv5ForKind(t, plainFactory, gvk), plainFactory: plainFactory}
	startAndSync(t, plainFactory)
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
	adv5WiredAtLeast(t, "", compact, 6)
}
