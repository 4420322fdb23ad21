package controlplanetest

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// WithoutWatchList returns a copy of cfg whose requests reach an API
// server that never ends a stream of initial events (watch-list) with its
// bookmark, as aggregated API servers and old ones do not, while without
// says so: a request for such a stream is sent without the parameters
// that ask for it and for bookmarks, so the server sends the objects and
// then only changes. (Without only sendInitialEvents, this API server
// still ends the objects with the bookmark when bookmarks are allowed.)
//
// without is called once for each request that asks for a stream, so a
// test can count them; a stream it returns false for is served as asked.
// Passing an atomic.Bool's Load holds streams open until the test clears
// it.
func WithoutWatchList(cfg *rest.Config, without func() bool) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if q := req.URL.Query(); q.Get("sendInitialEvents") == "true" && without() {
				q.Del("sendInitialEvents")
				q.Del("resourceVersionMatch")
				q.Del("allowWatchBookmarks")
				req = req.Clone(req.Context())
				req.URL.RawQuery = q.Encode()
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}
