package leader_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// Helpers of the adversarial tests of issue 24's second attack
// (adv5_*_test.go).

// stall is the inner transport of a fenced config whose creates of
// ConfigMaps (POSTs to a configmaps collection) sit in the network: the
// request, as the fence sent it (stamped or not), is kept and the client
// gets an error, as on a connection cut mid-request; deliver sends it to
// the API server later, as a connection that resumes does. Every other
// request goes through.
type stall struct {
	next http.RoundTripper
	// suffixes are the ends of the paths whose writes are held
	// ("/configmaps": creates of ConfigMaps).
	suffixes []string
	mu       sync.Mutex
	held     []*http.Request
}

func (s *stall) RoundTrip(req *http.Request) (*http.Response, error) {
	held := false
	for _, suffix := range s.suffixes {
		held = held || req.Method != http.MethodGet && strings.HasSuffix(req.URL.Path, suffix)
	}
	if !held {
		return s.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.mu.Lock()
	s.held = append(s.held, r)
	s.mu.Unlock()
	return nil, errors.New("adv5: connection stalled (the request is held, and delivered later)")
}

// stalled returns a copy of cfg whose ConfigMap creates are held by the
// returned stall (the fence, wrapped around it by Fence, is outside).
func stalled(cfg *rest.Config) (*rest.Config, *stall) {
	return stalledOn(cfg, "/configmaps")
}

// stalledOn is stalled for the writes (not reads) of the paths that end
// with one of suffixes.
func stalledOn(cfg *rest.Config, suffixes ...string) (*rest.Config, *stall) {
	s := &stall{suffixes: suffixes}
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { s.next = rt; return s })
	return c, s
}

// deliver sends the held requests to the API server now, on a context of
// the test (the client's gave up long ago), and returns each answer's
// status code and body, in the order they were held.
func (s *stall) deliver(t *testing.T) (codes []int, bodies []string) {
	t.Helper()
	rt, err := rest.TransportFor(cpConfigForDelivery())
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, r := range held {
		resp, err := rt.RoundTrip(r.Clone(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		codes, bodies = append(codes, resp.StatusCode), append(bodies, string(b))
	}
	return codes, bodies
}

// cpConfigForDelivery is the config held requests are delivered with: the
// test API server's, so the held request's credentials are the sender's.
func cpConfigForDelivery() *rest.Config { return rest.CopyConfig(cp.Config()) }
