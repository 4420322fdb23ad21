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

	"k8s.io/apimachinery/pkg/runtime/schema"

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
	v1 := adv5DialsIn(t, group, "v1", ns)
	const n = 60
	pad := strings.Repeat("0123456789abcdef", 100<<10/16)
	for i := range n {
		v1.create(fmt.Sprintf("d-%02d", i), map[string]any{"pad": pad}, nil)
	}
	gvk := schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "Dial"}
	release, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var streams atomic.Int64
	cfg := adv5Wrap(cp.Config(), func(next http.RoundTripper, r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err != nil || r.URL.Query().Get("sendInitialEvents") != "true" || !strings.Contains(r.URL.Path, "/dials") {
			return resp, err
		}
		if streams.Add(1) == 1 {
			resp.Body = &adv5HeldBody{ReadCloser: resp.Body, held: held, once: &once, release: release}
		}
		return resp, err
	})
	var in informers
	in.compactFactory = newCacheFactory(t, cfg, adv5Options(ns, false, gvk))
	in.compact = adv5ForKind(t, in.compactFactory, gvk)
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
	v1.remove("d-00")
	close(release)
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := in.compactFactory.WaitForCacheSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	in.plainFactory = newCacheFactory(t, cp.Config(), adv5Options(ns, false))
	in.plain = adv5ForKind(t, in.plainFactory, gvk)
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
	adv5WiredAtLeast(t, "", in.compact, n-1+5)
}
