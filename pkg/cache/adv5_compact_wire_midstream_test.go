package cache_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv5HeldBody is a response body that, once some bytes were read, blocks
// further reads until release is closed, and then breaks (unexpected EOF):
// a connection that stalls in the middle of a stream and then breaks.
type adv5HeldBody struct {
	io.ReadCloser
	read    int
	held    chan struct{} // closed when the reader first blocks
	once    *sync.Once
	release <-chan struct{}
}

func (b *adv5HeldBody) Read(p []byte) (int, error) {
	if b.read > 1<<20 {
		b.once.Do(func() { close(b.held) })
		<-b.release
		b.ReadCloser.Close()
		return 0, io.ErrUnexpectedEOF // the connection broke
	}
	n, err := b.ReadCloser.Read(p)
	b.read += n
	return n, err
}

// TestAdv5CompactCacheOfAWatchListBrokenInItsMiddle: a compact cache's
// first watch-list of a CRD (about 6 MB of initial events, in v1beta1
// while v1 is stored) stalls in its middle, after some of its initial
// events were read from the wire; meanwhile the CRD's storage version
// changes to v1beta1 and an object is deleted; then the connection breaks,
// before the end bookmark. The cache must sync to exactly the server's
// objects, field for field the default cache's, none of the broken
// stream's objects kept (the deleted one absent).
func TestAdv5CompactCacheOfAWatchListBrokenInItsMiddle(t *testing.T) {
	group := adv5TwoVersionKind(t, "{strategy: None}")
	ns := controlplanetest.Namespace(t, cp.Config())
	v1 := dynamic.NewForConfigOrDie(cp.Config()).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "dials"}).Namespace(ns)
	const n = 60
	pad := strings.Repeat("0123456789abcdef", 100<<10/16)
	for i := range n {
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"pad": pad}}}
		o.SetAPIVersion(group + "/v1")
		o.SetKind("Dial")
		o.SetName(fmt.Sprintf("d-%02d", i))
		if _, err := v1.Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gvk := schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "Dial"}
	release, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var streams atomic.Int64
	cfg := rest.CopyConfig(cp.Config())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return adv5RoundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil || r.URL.Query().Get("sendInitialEvents") != "true" || !strings.Contains(r.URL.Path, "/dials") {
				return resp, err
			}
			if streams.Add(1) == 1 {
				resp.Body = &adv5HeldBody{ReadCloser: resp.Body, held: held, once: &once, release: release}
			}
			return resp, err
		})
	}
	var in informers
	in.compactFactory = newCacheFactory(t, cfg, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := in.compactFactory.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("the watch-list was never held: the test did not provoke what it is about")
	}
	adv5StoreIn(t, group, "v1beta1")
	if err := v1.Delete(t.Context(), "d-00", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := in.compactFactory.WaitForCacheSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	in.plainFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	if in.plain, err = in.plainFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, in.plainFactory)
	controlplanetest.Eventually(t, 2*time.Minute, "the compact cache to hold the server's objects", func() bool {
		_, has0, _ := in.compact.GetStore().GetByKey(ns + "/d-00")
		return !has0 && len(in.compact.GetStore().ListKeys()) == n-1
	})
	for i := 1; i < n; i += 7 {
		in.sameAsPlain(t, fmt.Sprintf("%s/d-%02d", ns, i))
	}
	if streams.Load() < 2 {
		t.Errorf("%d watch-list streams, want the broken one and another", streams.Load())
	}
	// Some of the broken stream's objects (about 1 MB of it) and the second's.
	if w := cache.WiredObjects(in.compact); w < n-1+5 {
		t.Errorf("%d objects read from the wire, want some of the broken stream's and the %d of the second", w, n-1)
	}
}
