package dependents_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// adv13By is a handler of the WebApps in ns: ConfigMap "<name>-cm"
// saying by whom.
func adv13By(ns, by string) dependents.ViewHandler[*demov1.WebApp] {
	return func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"},
			Data: map[string]string{"by": by}})}, nil
	}
}

// TestAdv13JoinedRegistrationStoppedKeepsActingInTheUsersLoop: a
// registration joins a user's loop with FieldManager "adv13-joined"; its
// context ends while the user's loop runs on. Its Wait returns nil, so
// the field manager is free, and a second registration (its own loop)
// with that field manager is accepted. But the joined registration's
// handler and descriptors are still in the user's loop and scheduler:
// a resync of the user's loop still applies its objects. So two
// registrations act on one object at once: WebApp w's ConfigMap flips
// between the two handlers' data. Once a registration has stopped, its
// field manager must be either really free (nothing acts for it) or not
// released. It fails: after the second registration wrote
// by=second, the user's loop's resync wrote by=joined again.
func TestAdv13JoinedRegistrationStoppedKeepsActingInTheUsersLoop(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log := controlplanetest.QuietLogger()
	loopCtx, stopLoop := context.WithCancel(t.Context())
	defer stopLoop()
	joinCtx, stopJoin := context.WithCancel(loopCtx)
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	sched, err := kvscheduler.New(kvscheduler.Options{Name: "user", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(f.ControllerFactory(), log)
	lo := eventloop.Options{Committer: loopcommit.New(sched), Logger: log.WithField("loop", "user"), Name: "user"}
	bridge.Configure(&lo)
	j, err := democtl.JoinWebAppDependents(joinCtx, f, webapps, "adv13-joined", adv13By(ns, "joined"),
		dependents.Options{FieldManager: "adv13-joined", Kinds: adv13CMKind, Logger: log},
		dependents.Host{Bridge: bridge, Scheduler: sched, Loop: &lo})
	if err != nil {
		t.Fatal(err)
	}
	loop, err := eventloop.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(loopCtx); err != nil {
		t.Fatal(err)
	}
	d, err := j.Start(joinCtx, loop)
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
		_ = sched.Close()
	})
	advCreateApp(t, webapps, ns, "w", nil)
	controlplanetest.Eventually(t, wait, "w's ConfigMap by the joined registration", func() bool {
		cm := advConfigMap(t, ns, "w-cm")
		return cm != nil && cm.Data["by"] == "joined"
	})

	stopJoin()
	waitCtx, done := context.WithTimeout(t.Context(), wait)
	defer done()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	// The field manager is free: a second registration takes it.
	second, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv13-second",
		func(app *demov1.WebApp) ([]*dependents.Object, error) { return adv13By(ns, "second")(app, nil) },
		dependents.Options{FieldManager: "adv13-joined", Kinds: adv13CMKind, Logger: log, Condition: "Second"})
	if err != nil {
		// Refused while the joined one's handler is in the user's loop: a
		// right answer, if it names the field manager.
		if !strings.Contains(err.Error(), "adv13-joined") {
			t.Errorf("the second registration is refused without naming the field manager: %v", err)
		}
		return
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCtx, done := context.WithTimeout(context.WithoutCancel(t.Context()), wait)
		defer done()
		_ = second.Wait(waitCtx)
	})
	controlplanetest.Eventually(t, wait, "w's ConfigMap by the second registration", func() bool {
		cm := advConfigMap(t, ns, "w-cm")
		return cm != nil && cm.Data["by"] == "second"
	})
	// The user's loop resyncs (its periodic or a requested resync): the
	// stopped registration must not write w's ConfigMap again.
	if err := loop.RequestResync(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := len(loop.History().Records())
	controlplanetest.Eventually(t, wait, "the user's loop resynced", func() bool {
		recs := loop.History().Records()
		for _, r := range recs[min(n, len(recs)):] {
			if r.Method.IsResync() && r.Txn != nil {
				return true
			}
		}
		return false
	})
	if cm := advConfigMap(t, ns, "w-cm"); cm == nil || cm.Data["by"] != "second" {
		var data map[string]string
		if cm != nil {
			data = cm.Data
		}
		t.Errorf("the joined registration, stopped (Wait returned nil, its field manager taken by another), "+
			"still wrote w's ConfigMap from the user's loop: %v", data)
	}
}
