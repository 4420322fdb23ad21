package cache_test

import (
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Helpers of the adversarial tests of issue 30 (adv_stream_*_test.go).

// heldStreams returns a config whose streams of initial events never end
// while hold is set (the request is sent without the parameters that ask
// for the end bookmark, so the server sends the objects and then only
// changes), and are served as asked once it is cleared.
func heldStreams(cfg *rest.Config, hold *atomic.Bool) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if q := req.URL.Query(); hold.Load() && q.Get("sendInitialEvents") == "true" {
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
