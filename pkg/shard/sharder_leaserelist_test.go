package shard

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestSharderWaitsForTheWholeLeaseRelist: the sharder's lease view is cut
// off while one member leaves and another joins; when it comes back its
// informer lists the Leases again, and the test holds that list back after
// its first Lease. Until the list is whole and in the informer's store,
// the sharder knows nothing of the members: it must not act on the Leases
// it had before (the new member missing from them), and every write it
// makes agrees with the members as they are.
func TestSharderWaitsForTheWholeLeaseRelist(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 40)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	proxy, proxied := controlplanetest.NewProxy(t, config())
	var st listStall
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	o.LeaseConfig = st.wrap(proxied)
	var rec requestLog
	s := newSharder(t, rec.wrap(config()), ring, o)
	runSharder(t, s)
	before := waitSettled(t, ring, a, b)

	proxy.Cut()
	eventually(t, "the sharder to see its lease view broken", func() bool {
		v := s.view()
		return v != nil && !v.valid
	})
	b.release(t)
	c := startMember(t, ring, "c")
	createConfigMaps(t, ring.Namespace, "late", 40)
	mark := rec.len()
	st.arm()
	proxy.Restore()
	select {
	case <-st.held:
	case <-time.After(testTimeout):
		t.Fatal("the sharder did not list the Leases again with a watch list: nothing was held back")
	}
	// Time for a sharder that took its old Leases for the members to
	// confirm one and write.
	time.Sleep(memberLease)
	if v := s.view(); v != nil && v.valid {
		t.Errorf("while its Lease list was held back, the sharder's member view was valid: live %v", v.live)
	}
	st.release()
	waitSettledOn(t, clientset(), ring, a.id, c.id)
	checkWritesAgree(t, ring, rec.since(mark), before, a.id, c.id)
}

// listStall, once armed, answers the next watch of Leases with 410 Gone
// (too old a resourceVersion), so that the informer lists again, and holds
// that watch list back after its first event, until released.
type listStall struct {
	mu      sync.Mutex
	armed   bool
	held    chan struct{} // closed when the stall holds bytes back
	resume  chan struct{} // closed by release
	release func()
}

func (s *listStall) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
	s.held, s.resume = make(chan struct{}), make(chan struct{})
	var once sync.Once
	resume := s.resume
	s.release = func() { once.Do(func() { close(resume) }) }
}

func (s *listStall) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	// JSON, whose watch events are lines, so that the first one can be
	// told from the rest.
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			if !strings.HasSuffix(req.URL.Path, "/leases") || q.Get("watch") != "true" {
				return next.RoundTrip(req)
			}
			s.mu.Lock()
			armed := s.armed
			s.mu.Unlock()
			if armed && q.Get("sendInitialEvents") != "true" {
				return &http.Response{StatusCode: http.StatusGone, Status: "410 Gone", Request: req,
					Header: http.Header{"Content-Type": []string{"application/json"}},
					Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure",` +
						`"message":"too old resource version: 1 (2)","reason":"Expired","code":410}`))}, nil
			}
			resp, err := next.RoundTrip(req)
			if err != nil || q.Get("sendInitialEvents") != "true" {
				return resp, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.armed {
				s.armed = false
				resp.Body = &stalledBody{ReadCloser: resp.Body, held: s.held, resume: s.resume, done: req.Context().Done()}
			}
			return resp, err
		})
	})
	return c
}

// stalledBody passes on a watch stream up to the end of its first event
// (a line), then holds the rest back until resume is closed.
type stalledBody struct {
	io.ReadCloser
	held           chan struct{}
	resume, done   <-chan struct{}
	passed, waited bool
	rest           []byte
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.passed {
		n, err := b.ReadCloser.Read(p)
		if i := bytes.IndexByte(p[:n], '\n'); i >= 0 {
			b.passed = true
			b.rest = append(b.rest, p[i+1:n]...)
			return i + 1, nil
		}
		return n, err
	}
	if !b.waited {
		b.waited = true
		close(b.held)
		select {
		case <-b.resume:
		case <-b.done:
			return 0, io.EOF
		}
	}
	if len(b.rest) > 0 {
		n := copy(p, b.rest)
		b.rest = b.rest[n:]
		return n, nil
	}
	return b.ReadCloser.Read(p)
}
