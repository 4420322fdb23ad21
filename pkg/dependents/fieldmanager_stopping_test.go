package dependents_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestFieldManagerIsReservedUntilTheRegistrationStopped: the field
// manager of a registration whose context ended is not free while the
// registration is still stopping (its handler runs on, within
// Options.StopTimeout): a second registration on the factory with the
// same FieldManager is refused until the first one's Wait returned, and
// accepted after it.
func TestFieldManagerIsReservedUntilTheRegistrationStopped(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "fm-stopping"
	entered, slow := make(chan struct{}, 1), make(chan struct{})
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "slow" {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-slow
		}
		return nil, nil
	}
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	ctx, stop := context.WithCancel(t.Context())
	first, err := dependents.Register(ctx, f, webapps, dependentstest.WebAppStatus(), "fm-first", handler, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "slow", nil)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the handler never ran for the owner")
	}
	stop() // the first registration stops; its handler is still running

	// Tried again and again while the first one is stopping (its context's
	// end is seen by its goroutines in no particular order): every try is
	// refused, however many run.
	for range 200 {
		ctx2, stop2 := context.WithCancel(t.Context())
		second, err := dependents.Register(ctx2, f, webapps, dependentstest.WebAppStatus(), "fm-second", handler, opts)
		stop2()
		if err == nil {
			t.Errorf("a second registration with the FieldManager %q was accepted while registration fm-first, whose context "+
				"ended, was still stopping (its handler still running): both would act on the field manager's objects", fm)
			waitStopped(t, second)
			break
		}
		if !strings.Contains(err.Error(), `"fm-first"`) || !strings.Contains(err.Error(), fm) {
			t.Fatalf("the refusal names neither the registration still stopping nor the field manager: %v", err)
		}
		runtime.Gosched()
	}
	close(slow)
	waitStopped(t, first)

	ctx3, stop3 := context.WithCancel(t.Context())
	third, err := dependents.Register(ctx3, f, webapps, dependentstest.WebAppStatus(), "fm-third", handler, opts)
	if err != nil {
		t.Fatalf("once fm-first stopped, its field manager should be free: %v", err)
	}
	stop3()
	waitStopped(t, third)
}

// waitStopped waits for d's Wait, which must return nil.
func waitStopped(t *testing.T, d *dependents.Dependents) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
}
