package dependents_test

import (
	"context"
	"testing"
	"time"

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
	log := controlplanetest.QuietLogger()
	loopCtx, stopLoop := context.WithCancel(t.Context())
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	sched, err := kvscheduler.New(kvscheduler.Options{Name: "user", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	lc := eventloop.DefaultConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	bridge := kubebridge.New(f.ControllerFactory(), log)
	lo := eventloop.Options{Config: &lc, Committer: loopcommit.New(sched), Logger: log.WithField("loop", "user"), Name: "user"}
	bridge.Configure(&lo)
	j, err := democtl.JoinWebAppDependents(loopCtx, f, webapps, name, handler,
		dependents.Options{FieldManager: name, Kinds: adv13CMKind, Logger: log},
		dependents.Host{Bridge: bridge, Scheduler: sched, Loop: &lo})
	if err != nil {
		t.Fatal(err)
	}
	if u := user(webapps); userFirst {
		lo.Handlers = append([]eventloop.EventHandler{u}, lo.Handlers...)
	} else {
		lo.Handlers = append(lo.Handlers, u)
	}
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
	return d, webapps
}
