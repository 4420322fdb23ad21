package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// Helpers of the tests in which a latched owner vouches for its
// dependents' children across a restart (vouch_test.go,
// adv14_*_test.go), and of those that refuse some of a registration's
// requests (adv15_abortdesired_test.go).

// latchHandler is the handler those tests share: in ns, owner's ConfigMap
// <owner>-cfg is ready while ready holds, and every other WebApp's
// ConfigMap <name>-cm, with the data data gives it (none when data is
// nil), RequiresOwnerAvailable owner.
func latchHandler(ns, owner string, ready *atomic.Bool,
	data func(*demov1.WebApp) map[string]string) dependents.Handler[*demov1.WebApp] {
	return func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == owner:
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner + "-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return ready.Load(), owner + "'s rule" })}, nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}
		if data != nil {
			cm.Data = data(app)
		}
		return []*dependents.Object{dependents.Of(cm).RequiresOwnerAvailable(ns, owner)}, nil
	}
}

// latchOwner runs registration fm of handler (latchHandler's) until owner
// and apps (created with config) exist and apps' ConfigMaps were created,
// which needs owner available, then stops it: the next registration
// finds owner's availability only in the latch it left.
func latchOwner(t *testing.T, ns, fm string, handler dependents.Handler[*demov1.WebApp], owner string,
	apps []string, config map[string]string) {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, heldKinds, handler)
	advCreateApp(t, webapps, ns, owner, nil)
	for _, n := range apps {
		advCreateApp(t, webapps, ns, n, config)
	}
	controlplanetest.Eventually(t, wait, strings.Join(apps, ", ")+"'s ConfigMaps, once "+owner+" is available", func() bool {
		for _, n := range apps {
			if advConfigMap(t, ns, n+"-cm") == nil {
				return false
			}
		}
		return true
	})
	stopAndWait(t, stop, d)
}

// startThrough starts registration fm of handler (ConfigMaps, a minute to
// stop) until ctx ends, on a config whose every request goes to through
// first; through passes it on to next or answers it itself.
func startThrough(t *testing.T, ctx context.Context, fm string, handler dependents.Handler[*demov1.WebApp],
	through func(req *http.Request, next http.RoundTripper) (*http.Response, error)) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return startThroughWith(t, ctx, fm, handler, nil, through)
}

// startThroughWith is startThrough with the event loop's configuration
// (nil: the default).
func startThroughWith(t *testing.T, ctx context.Context, fm string, handler dependents.Handler[*demov1.WebApp], loop *eventloop.Config,
	through func(req *http.Request, next http.RoundTripper) (*http.Response, error)) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) { return through(req, next) })
	})
	opts := dependents.Options{FieldManager: fm, Kinds: heldKinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute, EventLoop: loop}
	return dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
}

// restartRefusingVouch starts registration fm of handler again, its vouch
// reads refused while refuse holds, and waits until its first resync
// failed on them.
func restartRefusingVouch(t *testing.T, ns, fm string, handler dependents.Handler[*demov1.WebApp],
	refuse *atomic.Bool) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	d, webapps := startThrough(t, t.Context(), fm, handler, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		q := req.URL.Query()
		// Any read of a ConfigMap of the namespace with managedFields
		// that is not the informers' (which carry no selector):
		// a list of the field manager's, or a single object's.
		vouchRead := req.Method == http.MethodGet && q.Get("watch") == "" && strings.Contains(req.URL.Path, "/namespaces/"+ns+"/configmaps") &&
			(q.Get("labelSelector") == kubedescriptor.LabelManagedBy+"="+fm || strings.Contains(req.URL.Path, "/configmaps/"))
		if refuse.Load() && vouchRead {
			return nil, errors.New("read refused by the test")
		}
		return next.RoundTrip(req)
	})
	controlplanetest.Eventually(t, wait, "the first resync failing on the refused read", func() bool {
		return loopFailureNames(d, "vouches for readiness")
	})
	return d, webapps
}

// loopFailureCount counts the handler errors of d's loop containing sub.
func loopFailureCount(d *dependents.Dependents, sub string) int {
	n := 0
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if h.Error != nil && strings.Contains(h.Error.Error(), sub) {
				n++
			}
		}
	}
	return n
}
