package dependents_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// startJoinedWithUser runs a user's event loop (its own scheduler and
// bridge, the after-error healing delayed past the test so that the
// tests own the window before it) with registration name (its field
// manager too) joined to it, and the user's handler that user returns
// for the WebApps' controller: after the registration's, or before it
// (userFirst). It returns the registration, started, and the controller;
// all of it stops when the test ends.
func startJoinedWithUser(t *testing.T, name string, handler dependents.ViewHandler[*demov1.WebApp],
	user func(democtl.WebAppController) eventloop.EventHandler, userFirst bool) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	lc := eventloop.DefaultConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	j := adv18JoinWith(t, adv18Setup{name: name, lc: lc, handler: handler, user: user, userFirst: userFirst})
	return j.d, j.webapps
}

// refusingCWrites returns a config of the API server that refuses the
// creates and updates of ConfigMap c-cm in ns (any create there) while
// blockC is set, and records in created that one went through (the
// object may be deleted again before a test looks).
func refusingCWrites(ns string) (cfg *rest.Config, blockC, created *atomic.Bool) {
	blockC, created = new(atomic.Bool), new(atomic.Bool)
	cfg = rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			path := req.URL.Path
			cWrite := strings.Contains(path, "/namespaces/"+ns+"/configmaps") && req.Method != http.MethodGet &&
				req.Method != http.MethodDelete && (strings.HasSuffix(path, "/c-cm") || req.Method == http.MethodPost)
			if cWrite && blockC.Load() {
				return nil, errors.New("c-cm's create refused by the test while blockC is set")
			}
			resp, err := next.RoundTrip(req)
			if cWrite && err == nil && resp.StatusCode < 300 {
				created.Store(true)
			}
			return resp, err
		})
	})
	return cfg, blockC, created
}
