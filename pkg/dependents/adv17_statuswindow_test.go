package dependents_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// adv17StatusAborter is a user's handler after a joined registration: once
// armed, it holds the event of WebApp key's change to Config["drop"] "yes"
// until the owner's condition says Ready at the new generation (or
// adv17Bound passes), then aborts it, as a user's handler that is slow to
// find it cannot handle the event.
type adv17StatusAborter struct {
	key     string
	webapps democtl.WebAppController
	armed   atomic.Bool
	did     atomic.Bool
	sawGen  atomic.Int64 // the generation the owner's condition said Ready at while the event was not committed
	sawText atomic.Value // that condition's message
}

// adv17Bound bounds the wait for a condition that must never come.
const adv17Bound = 30 * time.Second

// String implements eventloop.EventHandler.
func (a *adv17StatusAborter) String() string { return "adv17-user" }

// HandlesEvent implements eventloop.EventHandler.
func (a *adv17StatusAborter) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (a *adv17StatusAborter) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: it keeps no values.
func (a *adv17StatusAborter) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}

// Update implements eventloop.EventHandler.
func (a *adv17StatusAborter) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	c, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || c.Key != a.key {
		return "", nil
	}
	app, ok := c.NewValue.(*demov1.WebApp)
	if !ok || app.Spec.Config["drop"] != "yes" || !a.armed.CompareAndSwap(true, false) {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(txn.Context(), adv17Bound)
	defer cancel()
	for ctx.Err() == nil {
		now, err := a.webapps.Get(ctx, app.Namespace, app.Name, metav1.GetOptions{})
		if err == nil {
			cond := dependents.DefaultCondition.Get(now.Status.Conditions)
			if cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == app.Generation {
				a.sawGen.Store(app.Generation)
				a.sawText.Store(cond.Message)
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	a.did.Store(true)
	return "", eventloop.NewAbortEventError(errors.New("the user's handler cannot handle this event now"))
}

// TestAdv17ConditionReadyForAComputationNeverCommitted: a registration
// joined to a user's loop, the user's handler after it. WebApp a keeps
// a-x, not ready (another controller's annotation says so): its condition
// is False. a's spec changes to want nothing (Config drop=yes): the
// registration computes a, sets its report (no objects) and tells the
// status handler, which writes it at once from the controllers' workers,
// while the event's transaction is still open. The user's handler then
// aborts the event: nothing is committed, a-x is never withdrawn, and the
// undo puts the report back (reports.go says "a condition never tells of
// a computation the scheduler did not get"). But in between, a's
// condition said Ready at the new generation, for a computation the
// scheduler never got, while a-x stayed: anyone acting on a's Ready (a
// rollout gate, kubectl wait) acted on a state that never was. The user's
// handler waits for that write (bounded by adv17Bound) before it aborts,
// so that the window is the test's and not the machine's load.
func TestAdv17ConditionReadyForAComputationNeverCommitted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns || app.Spec.Config["drop"] == "yes" {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-x"}}).
			ReadyWhen(func(live runtime.Object) (bool, string) {
				cm, ok := live.(*corev1.ConfigMap)
				return ok && cm.Annotations["adv16/ready"] == "yes", "a's controller has not said ready"
			})}, nil
	}
	var user *adv17StatusAborter
	_, webapps := startJoinedWithUser(t, "adv17-status", handler, func(w democtl.WebAppController) eventloop.EventHandler {
		user = &adv17StatusAborter{key: ns + "/a", webapps: w}
		return user
	}, false)
	advCreateApp(t, webapps, ns, "a", map[string]string{"drop": "no"})
	controlplanetest.Eventually(t, wait, "a-x, and a's condition saying it is not ready", func() bool {
		return advConfigMap(t, ns, "a-x") != nil && adv17Says(t, webapps, ns, "a", metav1.ConditionFalse)
	})

	user.armed.Store(true)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config = map[string]string{"drop": "yes"}
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait+adv17Bound, "the user's handler aborted a's event", func() bool { return user.did.Load() })
	if gen := user.sawGen.Load(); gen != 0 {
		t.Errorf("a's condition said Ready at generation %d (%q) while the event of that generation was not committed; "+
			"a-x, which it withdrew, is still there: %v (a's condition now %q)", gen, user.sawText.Load(),
			advConfigMap(t, ns, "a-x") != nil, dependentstest.ReadyMessage(t.Context(), webapps, ns, "a"))
	}
}

// adv17Says tells whether the WebApp's condition has status st.
func adv17Says(t *testing.T, c democtl.WebAppController, ns, name string, st metav1.ConditionStatus) bool {
	app, err := c.Get(t.Context(), ns, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	cond := dependents.DefaultCondition.Get(app.Status.Conditions)
	return cond != nil && cond.Status == st
}
