package dependents_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdvOneFailingOwnerStopsEveryOwnerAfterARestart: after a restart,
// the handler fails (for good: a bug, a spec it cannot compute) for one
// owner whose objects exist. Before (issue 27): the first resync was
// aborted so as not to delete them, every after-error healing was a
// resync that aborted the same way, and the loop escalated the failed
// healings to a fatal error (MaxFailedHealings): no owner of the
// registration was ever served again, WebApp c, created afterwards, never
// got its ConfigMap. Now the failing owner is held (its objects put as
// they are, see held.go) and the resync goes through. (The healing delays
// are shortened by configuration so that the escalation, were it to come,
// comes within the test; the default gets there in about two and a half
// minutes.)
func TestAdvOneFailingOwnerStopsEveryOwnerAfterARestart(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := advStart(t, ctx, "adv2-fatal", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-kept"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "a-kept") != nil })
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}

	failing := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "a" {
			return nil, errors.New("cannot compute a")
		}
		return advConfigMaps(app)
	}
	const maxFailed = 2
	fast := func(o *dependents.Options) {
		cfg := dependents.DefaultEventLoopConfig()
		cfg.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Millisecond}
		cfg.MaxAfterErrorHealingDelay = eventloop.Duration{Duration: 20 * time.Millisecond}
		cfg.MaxFailedHealings = maxFailed
		o.EventLoop = &cfg
	}
	d, _ = advStart(t, t.Context(), "adv2-fatal", cmKind, failing, fast)
	// Settled: the loop is aborted, or it has got through more failed
	// healings than it tolerates, or a resync went through.
	controlplanetest.Eventually(t, wait, "the loop aborted, or past its failed healings", func() bool {
		if d.Loop().Status().State == eventloop.StateAborted {
			return true
		}
		failed, ok := 0, false
		for _, r := range d.Loop().History().Records() {
			if !r.Method.IsResync() {
				continue
			}
			err := false
			for _, h := range r.Handlers {
				err = err || h.Error != nil
			}
			if err {
				failed++
			} else {
				ok = true
			}
		}
		return ok || failed > maxFailed+1
	})
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "c-new"})
	controlplanetest.Eventually(t, wait, "c's ConfigMap (loop: "+d.Loop().Status().State.String()+")", func() bool {
		return advConfigMap(t, ns, "c-new") != nil
	})
	if advConfigMap(t, ns, "a-kept") == nil {
		t.Error("a's ConfigMap was deleted")
	}
}
