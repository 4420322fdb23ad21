package dependents_test

import (
	"context"
	"errors"
	"testing"
	"time"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv15FactoryStopsReportingAStuckHandlerOnceItReturned: a term's
// registration outlived its StopTimeout, so that term's f.Wait reports a
// *controller.StillRunningError (its Lease is left to expire). Once the
// handler has returned, a later term of the same factory (no registration
// of its own) that stops cleanly must not report it again: every later
// term would leave its Lease to expire for a handler long gone.
func TestAdv15FactoryStopsReportingAStuckHandlerOnceItReturned(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	entered, unblock, returned := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	stuck := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "stuck" {
			defer close(returned)
			entered <- struct{}{}
			<-unblock
		}
		return nil, nil
	}
	opts := dependents.Options{FieldManager: "adv15-bound", Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Second}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	ctx1, stop1 := context.WithCancel(t.Context())
	if _, err := dependents.Register(ctx1, f, webapps, dependentstest.WebAppStatus(), "adv15-bound", stuck, opts); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx1, 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "stuck", nil)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the handler never ran for the owner")
	}
	stop1()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := f.Wait(waitCtx); !errors.Is(err, controller.ErrStillRunning) {
		t.Fatalf("the first term's f.Wait should report the stuck handler, got %v", err)
	}
	close(unblock)
	<-returned

	ctx2, stop2 := context.WithCancel(t.Context())
	if err := f.Start(ctx2, 2); err != nil {
		t.Fatal(err)
	}
	stop2()
	if err := f.Wait(waitCtx); err != nil {
		t.Errorf("a later term, stopped cleanly after the stuck handler returned, reports: %v", err)
	}
}
