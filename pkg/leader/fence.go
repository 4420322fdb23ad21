package leader

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// NotLeaderError is the error of a write that Fence refused.
type NotLeaderError struct {
	// Method and URL name the refused request.
	Method, URL string
	// Identity is the refusing replica's.
	Identity string
}

// Error says which request was refused.
func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("leader: %s %s refused: %s does not hold the lease", e.Method, e.URL, e.Identity)
}

// Fence returns a copy of cfg whose writes (any method but GET, HEAD and
// OPTIONS) fail with a *NotLeaderError unless e holds the lease at the
// moment the request is issued. Build the factories and clients of the
// work that fn runs from it: a handler that is still busy when the renew
// deadline passes, or a request retried after it, cannot write. Reads and
// watches go through, so informers stay warm on standbys. The lease's own
// client must not go through the fence.
func (e *Elector) Fence(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &fence{e: e, next: rt} })
	return c
}

type fence struct {
	e    *Elector
	next http.RoundTripper
}

func (f *fence) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !f.e.Holding() {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, &NotLeaderError{Method: req.Method, URL: req.URL.String(), Identity: f.e.Identity()}
		}
	}
	return f.next.RoundTrip(req)
}
