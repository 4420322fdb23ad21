package controller_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// streamHold plays an API server's streams of initial events (watch-list)
// for a test: each is held before the bookmark that ends it until release
// is closed, so the informer cannot sync before; and, if cut is set, the
// first stream breaks right after the event naming cut once breakNow is
// closed (the reflector then asks for a new stream, which lists again).
// Each stream is asked for as JSON, one event a line.
type streamHold struct {
	release <-chan struct{}
	// held receives how long the first stream held was held, if not nil.
	held chan<- time.Duration
	// cut names the object after which the first stream breaks.
	cut      string
	breakNow <-chan struct{}
	// streams counts the streams asked for.
	streams atomic.Int32
}

// wrap returns a copy of cfg whose streams of initial events s plays.
func (s *streamHold) wrap(cfg *rest.Config) *rest.Config {
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
			b := &heldBody{in: bufio.NewReader(resp.Body), closer: resp.Body, s: s, done: req.Context().Done()}
			if s.streams.Add(1) == 1 && s.cut != "" {
				b.cut = []byte(`"name":"` + s.cut + `"`)
			}
			resp.Body = b
			return resp, nil
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// heldBody passes a watch body on line by line, holding the line of the
// bookmark that ends the initial events until s.release or done is
// closed, and breaking after the line naming cut, if set.
type heldBody struct {
	in      *bufio.Reader
	closer  io.Closer
	s       *streamHold
	done    <-chan struct{}
	cut     []byte
	broken  bool // the line naming cut was read
	pending []byte
	err     error
}

func (b *heldBody) Read(p []byte) (int, error) {
	if len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		if b.broken {
			// The reader got the line naming cut: the break follows.
			select {
			case <-b.s.breakNow:
			case <-b.done:
			}
			b.err = io.ErrUnexpectedEOF
			return 0, b.err
		}
		line, err := b.in.ReadBytes('\n')
		b.hold(line)
		b.pending, b.err = line, err
		b.broken = b.cut != nil && bytes.Contains(line, b.cut)
		if len(line) == 0 {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// hold holds line, when it is the bookmark ending the initial events,
// until s.release or done is closed.
func (b *heldBody) hold(line []byte) {
	if !bytes.Contains(line, []byte(`"BOOKMARK"`)) || !bytes.Contains(line, []byte(`"k8s.io/initial-events-end":"true"`)) {
		return
	}
	began := time.Now()
	select {
	case <-b.s.release:
	case <-b.done:
	}
	if b.s.held != nil {
		select {
		case b.s.held <- time.Since(began):
		default:
		}
	}
}

func (b *heldBody) Close() error { return b.closer.Close() }
