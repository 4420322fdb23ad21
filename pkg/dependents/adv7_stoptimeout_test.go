package dependents_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv7StopTimeoutBoundsTheStopOfABusyHandler: Options.StopTimeout
// "bounds how long the loop may take to stop once the registration's
// context ends". A term under leader election or sharding that waits for
// its registration (Dependents.Wait) must get an answer within that bound
// when a handler does not return, so that it can report the handler still
// running (and keep its Lease to expire) rather than hang. The
// registration starts its loop with its own context, so once that context
// ended loop.Stop sends no Shutdown and returns nil at once, and the
// loop's Close then waits for the busy handler with no bound: Wait hangs
// until the handler returns. Here the handler is stuck for the test's
// length; StopTimeout is 1 s and Wait is given 30 s.
func TestAdv7StopTimeoutBoundsTheStopOfABusyHandler(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	entered := make(chan struct{}, 1)
	stuck := make(chan struct{})
	defer close(stuck)
	ctx, stop := context.WithCancel(t.Context())
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(ctx, f, webapps, dependentstest.WebAppStatus(), "adv7-stop", func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "stuck" {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-stuck
		}
		return nil, nil
	}, dependents.Options{FieldManager: "adv7-stop", Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "stuck", nil)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the handler never ran for the owner")
	}
	stop()
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	began := time.Now()
	err = d.Wait(waitCtx)
	if errors.Is(err, context.DeadlineExceeded) && waitCtx.Err() != nil {
		t.Fatalf("Dependents.Wait with a StopTimeout of 1 s and a handler that does not return: still waiting after %v (%v); "+
			"the stop is not bounded, so a term that waits for it hangs", time.Since(began).Round(time.Second), err)
	}
	t.Logf("Wait returned after %v: %v", time.Since(began).Round(time.Millisecond), err)
	var still *controller.StillRunningError
	if !errors.As(err, &still) || !errors.Is(err, controller.ErrStillRunning) {
		t.Fatalf("Dependents.Wait after a StopTimeout passed with a handler still running: %v, want a *controller.StillRunningError "+
			"(errors.Is(err, controller.ErrStillRunning)), on which leader and shard leave their Lease to expire", err)
	}
	if len(still.Handlers) != 1 || !strings.Contains(still.Handlers[0].Handler, "adv7-stop") {
		t.Fatalf("the error names %v, want the registration's handler still running", still.Handlers)
	}
}
