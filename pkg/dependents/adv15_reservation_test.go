package dependents_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv15FieldManagerFreedOnceAStuckHandlerReturned: a term's
// registration stops while its handler outlives Options.StopTimeout (Wait
// reports a *controller.StillRunningError, so the field manager stays
// reserved: the handler may yet act). Once that handler has returned,
// nothing of the old registration runs any more: the next term of the same
// process, on the same factory, must be able to register the same field
// manager and act.
func TestAdv15FieldManagerFreedOnceAStuckHandlerReturned(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv15-reserve"
	entered, unblock, returned := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	stuck := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "stuck" {
			defer close(returned)
			entered <- struct{}{}
			<-unblock
		}
		return nil, nil
	}
	// The next term's handler returns a ConfigMap, so ConfigMaps are the
	// registration's kind (with the package's kinds, which lack them, the
	// owner is refused: "ConfigMap is not one of the registration's
	// kinds").
	opts := dependents.Options{FieldManager: fm, Kinds: adv13CMKind, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Second}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	ctx1, stop1 := context.WithCancel(t.Context())
	first, err := dependents.Register(ctx1, f, webapps, dependentstest.WebAppStatus(), "adv15-term1", stuck, opts)
	if err != nil {
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
	stop1() // the term ends; its handler is stuck past the StopTimeout
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := first.Wait(waitCtx); !errors.Is(err, controller.ErrStillRunning) {
		t.Fatalf("the first registration's Wait should report its handler still running, got %v", err)
	}
	_ = f.Wait(waitCtx) // the factory's run ended (it reports the stuck handler)
	close(unblock)
	<-returned // nothing of the first term runs any more

	withCM := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
	ctx2, stop2 := context.WithCancel(t.Context())
	defer stop2()
	var second *dependents.Dependents
	var lastErr error
	controlplanetest.Eventually(t, wait, "the next term registering the field manager once the stuck handler returned", func() bool {
		second, lastErr = dependents.Register(ctx2, f, webapps, dependentstest.WebAppStatus(), "adv15-term2", withCM, opts)
		if lastErr != nil {
			t.Logf("refused: %v", lastErr)
		}
		return lastErr == nil
	})
	if err := f.Start(ctx2, 2); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "next", nil)
	controlplanetest.Eventually(t, wait, "the next term's ConfigMap", func() bool { return advConfigMap(t, ns, "next-cm") != nil })
	stop2()
	waitStopped(t, second)
}
