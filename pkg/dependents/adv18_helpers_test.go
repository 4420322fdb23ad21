package dependents_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// adv18Joined is a registration joined to a user's loop, the user's
// handlers placed before the registration's.
type adv18Joined struct {
	loop    *eventloop.Loop
	webapps democtl.WebAppController
	sched   *kvscheduler.Scheduler
	d       *dependents.Dependents
}

// adv18OneConfigMap gives every WebApp of ns one ConfigMap, <name>-cm.
func adv18OneConfigMap(ns string) dependents.ViewHandler[*demov1.WebApp] {
	return func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
}

// adv18Join joins a registration named name to a user's loop configured
// by lc, with the user's handlers first, and starts everything.
func adv18Join(t *testing.T, name string, lc eventloop.Config, handler dependents.ViewHandler[*demov1.WebApp],
	user ...eventloop.EventHandler) *adv18Joined {
	t.Helper()
	return adv18JoinWith(t, adv18Setup{name: name, lc: lc, handler: handler, before: user})
}

// adv18Setup is what adv18JoinWith joins: the user's handlers before and
// after the registration's, and after them the one user makes for the
// WebApps' controller (first: before every other), the API server's
// config (nil: cp's).
type adv18Setup struct {
	name          string
	lc            eventloop.Config
	handler       dependents.ViewHandler[*demov1.WebApp]
	before, after []eventloop.EventHandler
	user          func(democtl.WebAppController) eventloop.EventHandler
	userFirst     bool
	cfg           *rest.Config
}

// adv18JoinWith joins the registration of s to a user's loop and starts
// everything.
func adv18JoinWith(t *testing.T, s adv18Setup) *adv18Joined {
	t.Helper()
	log := controlplanetest.QuietLogger()
	loopCtx, stopLoop := context.WithCancel(t.Context())
	cfg := s.cfg
	if cfg == nil {
		cfg = cp.Config()
	}
	name, lc, handler := s.name, s.lc, s.handler
	f, webapps := dependentstest.Factory(t, cfg, nil)
	sched, err := kvscheduler.New(kvscheduler.Options{Name: "user", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(f.ControllerFactory(), log)
	lo := eventloop.Options{Config: &lc, Committer: loopcommit.New(sched), Logger: log.WithField("loop", "user"), Name: "user"}
	bridge.Configure(&lo)
	j, err := democtl.JoinWebAppDependents(loopCtx, f, webapps, name, handler,
		dependents.Options{FieldManager: name, Kinds: adv13CMKind, Logger: log},
		dependents.Host{Bridge: bridge, Scheduler: sched, Loop: &lo})
	if err != nil {
		t.Fatal(err)
	}
	before, after := s.before, s.after
	if s.user != nil && s.userFirst {
		before = append([]eventloop.EventHandler{s.user(webapps)}, before...)
	} else if s.user != nil {
		after = append(slices.Clone(after), s.user(webapps))
	}
	lo.Handlers = append(append(append([]eventloop.EventHandler{}, before...), lo.Handlers...), after...)
	loop, err := eventloop.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(loopCtx); err != nil {
		t.Fatal(err)
	}
	d, err := j.Start(loopCtx, loop)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(loopCtx, 2); err != nil {
		t.Fatal(err)
	}
	go func() { _ = bridge.Start(loopCtx, loop) }()
	t.Cleanup(func() {
		stopLoop()
		waitCtx, done := context.WithTimeout(context.Background(), wait)
		defer done()
		_ = loop.Stop(waitCtx)
		_ = d.Wait(waitCtx)
		_ = sched.Close()
	})
	return &adv18Joined{loop: loop, webapps: webapps, sched: sched, d: d}
}

// adv18UserEvent is an event of the user's own, pushed on the joined
// loop, of the transaction type typ.
type adv18UserEvent struct {
	typ  eventloop.UpdateTransactionType
	done chan error
}

// GetName implements eventloop.Event.
func (e *adv18UserEvent) GetName() string { return "adv18-user-event" }

// String implements eventloop.Event.
func (e *adv18UserEvent) String() string { return "adv18 user event (" + e.typ.String() + ")" }

// Method implements eventloop.Event.
func (e *adv18UserEvent) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (e *adv18UserEvent) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (e *adv18UserEvent) Done(err error) {
	select {
	case e.done <- err:
	default: // a filler nobody waits for
	}
}

// TransactionType implements eventloop.UpdateEvent.
func (e *adv18UserEvent) TransactionType() eventloop.UpdateTransactionType { return e.typ }

// Direction implements eventloop.UpdateEvent.
func (e *adv18UserEvent) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

// adv18UserAborter is a user's handler that aborts its own events
// (adv18UserEvent), as a handler aborts an event it cannot handle now,
// and passes every other one.
type adv18UserAborter struct {
	aborted atomic.Int32
	plain   bool // fail with a plain error, not an abort
}

// String implements eventloop.EventHandler.
func (a *adv18UserAborter) String() string { return "adv18-user" }

// HandlesEvent implements eventloop.EventHandler.
func (a *adv18UserAborter) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (a *adv18UserAborter) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: it keeps no values.
func (a *adv18UserAborter) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}

// Update implements eventloop.EventHandler.
func (a *adv18UserAborter) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	if _, ok := ev.(*adv18UserEvent); !ok {
		return "", nil
	}
	a.aborted.Add(1)
	if a.plain {
		return "", errors.New("the user's handler failed its event")
	}
	return "", eventloop.NewAbortEventError(errors.New("the user's handler cannot handle its event now"))
}

// adv18Within polls cond until it holds or timeout passed, and tells
// whether it held.
func adv18Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}
