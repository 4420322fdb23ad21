package lasso_test

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// netGate sits between a side's informers and the API server, so that a
// scenario can make the cache lag behind the server at a chosen moment, on
// lasso and on Lariat alike:
//
//   - hold/open: what ConfigMap watches read is delivered only once open;
//   - cut/restore: open ConfigMap watches end, new ones are answered
//     410 Gone (so the informer lists again) and lists wait until restore,
//     so that an object deleted meanwhile leaves the cache by the relist,
//     as a DeletedFinalStateUnknown tombstone.
//
// Other requests (the handlers' writes, the test's reads) go through.
type netGate struct {
	mu     sync.Mutex
	held   chan struct{} // non-nil while held; closed by open
	cutOff chan struct{} // non-nil while cut; closed by restore
	bodies map[*gatedBody]struct{}
	// expired counts the watches answered 410 Gone while the gate was
	// cut: an informer so answered lists again before it watches.
	expired int
}

func newNetGate(cfg *rest.Config) (*netGate, *rest.Config) {
	g := &netGate{bodies: map[*gatedBody]struct{}{}}
	gated := rest.CopyConfig(cfg)
	gated.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { return g.roundTrip(rt, r) })
	})
	return g, gated
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (g *netGate) roundTrip(rt http.RoundTripper, r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/configmaps") {
		return rt.RoundTrip(r)
	}
	watch := r.URL.Query().Get("watch") == "true"
	g.mu.Lock()
	cutOff := g.cutOff
	g.mu.Unlock()
	if cutOff != nil {
		if watch {
			g.mu.Lock()
			g.expired++
			g.mu.Unlock()
			return gone(r), nil
		}
		select { // a list: it returns what exists after the cut
		case <-cutOff:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	resp, err := rt.RoundTrip(r)
	if err != nil || !watch {
		return resp, err
	}
	b := &gatedBody{ReadCloser: resp.Body, g: g}
	g.mu.Lock()
	g.bodies[b] = struct{}{}
	g.mu.Unlock()
	resp.Body = b
	return resp, nil
}

// gone is the API server's answer to a watch from a resourceVersion it no
// longer has.
func gone(r *http.Request) *http.Response {
	const status = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
		`"message":"too old resource version","reason":"Expired","code":410}`
	return &http.Response{
		StatusCode: http.StatusGone,
		Status:     "410 Gone",
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(status)),
		Request:    r,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
}

// hold makes watches deliver nothing more until open.
func (g *netGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == nil {
		g.held = make(chan struct{})
	}
}

// open delivers what watches held back, and what follows.
func (g *netGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

// cut ends the open watches and holds lists back until restore.
func (g *netGate) cut() {
	g.mu.Lock()
	if g.cutOff == nil {
		g.cutOff = make(chan struct{})
	}
	bodies := g.bodies
	g.bodies = map[*gatedBody]struct{}{}
	g.mu.Unlock()
	for b := range bodies {
		_ = b.ReadCloser.Close()
	}
}

// relisting tells whether an informer was told, since the gate was cut,
// that its watch cannot resume (410 Gone), so that it lists again:
// restoring before that lets its next watch resume where it left off, and
// see a deletion as a plain event instead of the relist's tombstone.
func (g *netGate) relisting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.expired > 0
}

// restore lets the lists held back by cut through.
func (g *netGate) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cutOff != nil {
		close(g.cutOff)
		g.cutOff = nil
	}
	g.expired = 0
}

func (g *netGate) wait() {
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held != nil {
		<-held
	}
}

// gatedBody is a watch's body: what it read is delivered only while the
// gate is open.
type gatedBody struct {
	io.ReadCloser
	g *netGate
}

func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.wait()
	return n, err
}

func (b *gatedBody) Close() error {
	b.g.mu.Lock()
	delete(b.g.bodies, b)
	b.g.mu.Unlock()
	return b.ReadCloser.Close()
}
