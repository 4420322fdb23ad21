package cache_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// laggingCache is a transport that plays what an API server behind a
// lagging watch cache would: a list of ConfigMaps at resourceVersion "0"
// ("any version") is answered with the first list it passed on, however
// much has changed since; consistent lists (resourceVersion "") and lists
// at a given version go to the server. It refuses streaming lists
// (sendInitialEvents), as a server without them does, so that informers
// fall back to plain lists. It records the resourceVersion of every list.
type laggingCache struct {
	rt http.RoundTripper
	ns string

	mu     sync.Mutex
	first  *recordedResponse
	listed []string // resourceVersion of each list of ConfigMaps in ns
}

type recordedResponse struct {
	status int
	header http.Header
	body   []byte
}

func (l *laggingCache) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/namespaces/"+l.ns+"/configmaps") {
		return l.rt.RoundTrip(req)
	}
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		if q.Get("sendInitialEvents") == "true" {
			return refuse(req), nil
		}
		return l.rt.RoundTrip(req)
	}
	rv := q.Get("resourceVersion")
	l.mu.Lock()
	l.listed = append(l.listed, rv)
	stale := l.first
	l.mu.Unlock()
	if rv == "0" && stale != nil {
		return &http.Response{
			StatusCode: stale.status, Header: stale.header.Clone(), Request: req,
			Body: io.NopCloser(bytes.NewReader(stale.body)), ContentLength: int64(len(stale.body)),
		}, nil
	}
	resp, err := l.rt.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	l.mu.Lock()
	if l.first == nil {
		l.first = &recordedResponse{status: resp.StatusCode, header: resp.Header.Clone(), body: body}
	}
	l.mu.Unlock()
	return resp, nil
}

func (l *laggingCache) lists() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.listed...)
}

func refuse(req *http.Request) *http.Response {
	body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"streaming lists are not served here","reason":"BadRequest","code":400}`
	return &http.Response{
		StatusCode: http.StatusBadRequest, Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
}

// TestRestartedInformerDoesNotGoBackInTime (issue 24, case 7): a cache
// factory started again lists its kinds again; behind a lagging watch
// cache, a list at resourceVersion "0" returns an older state than the one
// the informer had, and the restarted informer would go back in time (an
// object it saw change shows its old version again). Its lists are
// consistent, so what it holds only moves forward.
func TestRestartedInformerDoesNotGoBackInTime(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "moving", map[string]string{"v": "1"})
	lag := &laggingCache{ns: ns}
	cfg := cp.Config()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { lag.rt = rt; return lag })
	f := newCacheFactory(t, cfg, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var regressions []string
	seen := map[string]string{} // last resourceVersion told to the handler
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { recordVersion(obj, &mu, seen, &regressions) },
		UpdateFunc: func(_, obj any) {
			recordVersion(obj, &mu, seen, &regressions)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, cancel := context.WithCancel(context.Background())
	if err := f.Start(first); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WaitForCacheSync(first); err != nil {
		t.Fatal(err)
	}
	applyConfigMap(t, ns, "moving", map[string]string{"v": "2"})
	controlplanetest.Eventually(t, 30*time.Second, "the cache sees v=2", func() bool {
		return cachedLabel(informer, ns+"/moving") == "2"
	})
	cancel()
	if err := f.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	startAndSync(t, f)
	if got := cachedLabel(informer, ns+"/moving"); got != "2" {
		t.Errorf("after the restart the cache holds v=%q of an object it had seen at v=2: it went back in time", got)
	}
	mu.Lock()
	if len(regressions) > 0 {
		t.Errorf("the handler was told older versions than it had seen: %v", regressions)
	}
	mu.Unlock()
	for _, rv := range lag.lists() {
		if rv == "0" {
			t.Errorf("the informer listed at resourceVersion \"0\", which a lagging watch cache may answer with the past (lists: %q)", lag.lists())
			break
		}
	}
}

func cachedLabel(informer toolscache.SharedIndexInformer, key string) string {
	obj, ok, err := informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		return ""
	}
	return obj.(*corev1.ConfigMap).Labels["v"]
}

// recordVersion notes the resourceVersion an event carries, and any that is
// older than the last one seen for the object.
func recordVersion(obj any, mu *sync.Mutex, seen map[string]string, regressions *[]string) {
	o := obj.(metav1.Object)
	key := o.GetNamespace() + "/" + o.GetName()
	mu.Lock()
	defer mu.Unlock()
	if last, ok := seen[key]; ok && olderVersion(o.GetResourceVersion(), last) {
		*regressions = append(*regressions, key+"@"+o.GetResourceVersion()+" after "+last)
	}
	seen[key] = o.GetResourceVersion()
}

// olderVersion compares two resourceVersions of one object. They are
// opaque to clients; this test knows they are etcd revisions (decimal).
func olderVersion(a, b string) bool {
	return len(a) < len(b) || (len(a) == len(b) && a < b)
}
