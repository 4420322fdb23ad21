package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv19RetriesHeldAfterTheUsersLoopExitedWhileTheRegistrationRuns:
// a registration joined to a user's loop, the user's handler after it.
// r's ConfigMap fails to be created (the API server path refuses it), and
// the user's scheduler retries it. Then the user's handler starts failing
// every event (its own southbound down): x's event, which the
// registration computed, is aborted, x is stale and the registration
// holds the scheduler's retries (HoldRetries) until a committed
// transaction computes it, which none does while the user's handler
// fails. The user's loop then exits (stopped by the user; a fatal abort
// after MaxFailedHealings does not exit it) while the registration's
// context lives on, and the user's scheduler outlives the loop (stopping
// it is the user's). join.go means to release the hold once the loop has
// exited ("the user's scheduler may outlive the loop"), but releases it
// only after the registration's context ended too: until then the
// scheduler never retries anything, and r's ConfigMap, whose create now
// passes, is never created.
func TestAdv19RetriesHeldAfterTheUsersLoopExitedWhileTheRegistrationRuns(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var blockR atomic.Bool
	blockR.Store(true)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			path := req.URL.Path
			rWrite := strings.Contains(path, "/namespaces/"+ns+"/configmaps") && req.Method != http.MethodGet &&
				req.Method != http.MethodDelete && (strings.HasSuffix(path, "/r-cm") || req.Method == http.MethodPost)
			if rWrite && blockR.Load() {
				return nil, errors.New("r-cm's create refused by the test while blockR is set")
			}
			return next.RoundTrip(req)
		})
	})
	lc := eventloop.DefaultConfig()
	lc.MaxRetryAttempts = 1000 // retried for the whole test, not given up
	lc.EnableExpBackoffRetry = false
	user := &adv19FailingUser{}
	j := adv18JoinWith(t, adv18Setup{name: "adv19-exit", lc: lc, handler: adv18OneConfigMap(ns),
		after: []eventloop.EventHandler{user}, cfg: cfg})
	rKey := kubedescriptor.KeyFor(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "r-cm")
	advCreateApp(t, j.webapps, ns, "r", nil)
	controlplanetest.Eventually(t, wait, "r-cm's create failed, to be retried", func() bool {
		return j.sched.GetValueStatus(rKey).State == kvscheduler.Retrying
	})

	user.failing.Store(true)
	advCreateApp(t, j.webapps, ns, "x", nil)
	controlplanetest.Eventually(t, wait, "x's event aborted by the user's handler", func() bool {
		for _, rec := range j.loop.History().Records() {
			if !strings.Contains(rec.Description, ns+"/x") {
				continue
			}
			for _, h := range rec.Handlers {
				if h.Handler == user.String() && h.Error != nil {
					return true
				}
			}
		}
		return false
	})
	blockR.Store(false)
	stopCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := j.loop.Stop(stopCtx); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("the user's loop stopped with: %v", err)
	}
	<-j.loop.Exited()
	if !adv18Within(wait, func() bool { return advConfigMap(t, ns, "r-cm") != nil }) {
		t.Errorf("%v after the user's loop exited (the registration's context still live, the user's scheduler running), "+
			"r's ConfigMap, whose create now passes, was not created: the scheduler's retries are still held by the "+
			"registration (r-cm's value: %+v)", wait, j.sched.GetValueStatus(rKey))
	}
}
