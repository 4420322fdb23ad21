package controller_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// heldInitialEventsEnd returns a copy of cfg whose streams of initial
// events (watch-list) are held before the bookmark that ends them until
// release is closed (or the request ends), so the informer cannot sync
// before: what the test does before closing release happens while the
// list streams. Each stream is asked for as JSON, one event a line. held
// receives how long the first stream was held.
func heldInitialEventsEnd(cfg *rest.Config, release <-chan struct{}, held chan<- time.Duration) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("sendInitialEvents") != "true" {
				return rt.RoundTrip(req)
			}
			req = req.Clone(req.Context())
			req.Header.Set("Accept", "application/json")
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				return resp, err
			}
			resp.Body = &heldBody{in: bufio.NewReader(resp.Body), closer: resp.Body, release: release, done: req.Context().Done(), held: held}
			return resp, nil
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// heldBody passes a watch body on line by line, holding the line of the
// bookmark that ends the initial events until release or done is closed.
type heldBody struct {
	in            *bufio.Reader
	closer        io.Closer
	pending       []byte
	err           error
	release, done <-chan struct{}
	held          chan<- time.Duration
}

func (b *heldBody) Read(p []byte) (int, error) {
	if len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.in.ReadBytes('\n')
		if bytes.Contains(line, []byte(`"BOOKMARK"`)) && bytes.Contains(line, []byte(`"k8s.io/initial-events-end":"true"`)) {
			began := time.Now()
			select {
			case <-b.release:
			case <-b.done:
			}
			select {
			case b.held <- time.Since(began):
			default:
			}
		}
		b.pending, b.err = line, err
		if len(line) == 0 {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *heldBody) Close() error { return b.closer.Close() }
