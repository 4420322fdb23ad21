package dependents_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// adv16Aborter is a user's handler on the loop a registration joined: it
// aborts, once armed, the first event of ConfigMap key whose adv16/ready
// annotation is "no", as a user's handler aborts an event it cannot
// handle now (nothing committed, a healing resync later).
type adv16Aborter struct {
	key   string
	armed atomic.Bool
	did   atomic.Bool
}

// String implements eventloop.EventHandler.
func (a *adv16Aborter) String() string { return "adv16-user" }

// HandlesEvent implements eventloop.EventHandler.
func (a *adv16Aborter) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (a *adv16Aborter) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: it keeps no values.
func (a *adv16Aborter) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}

// Update implements eventloop.EventHandler.
func (a *adv16Aborter) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	c, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || c.Resource != "v1/ConfigMap" || c.Key != a.key {
		return "", nil
	}
	cm, ok := c.NewValue.(*corev1.ConfigMap)
	if ok && cm.Annotations["adv16/ready"] == "no" && a.armed.CompareAndSwap(true, false) {
		a.did.Store(true)
		return "", eventloop.NewAbortEventError(errors.New("the user's handler cannot handle this event now"))
	}
	return "", nil
}

// TestAdv16JoinedRegistrationOutOfStepAfterAUsersHandlerAborts: a
// registration joined to a user's loop, the user's own handler after it.
// z's ConfigMap is ready while another controller's annotation says so;
// b's ConfigMap RequiresOwner z. The annotation goes, and the user's
// handler aborts that event (nothing committed, as docs/dependents.md
// says: "A handler of the user's that fails its resync, or aborts it,
// does so for the registration too"). The registration had already taken
// z's verdict into its picture; it is told the event was not committed
// and computes z again with the next event. Before (h27a's attack): until
// the healing resync (its delay set long), the user's loop's next events
// committed on z's marker, and c's ConfigMap, which RequiresOwner z, was
// created while z was not ready.
func TestAdv16JoinedRegistrationOutOfStepAfterAUsersHandlerAborts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := zRequirers(ns)
	var user *adv16Aborter
	_, webapps := startJoinedWithUser(t, "adv16-joined", handler, func(democtl.WebAppController) eventloop.EventHandler {
		user = &adv16Aborter{key: ns + "/z-cfg"}
		return user
	}, false)
	startZAndB(t, webapps, ns)

	user.armed.Store(true)
	adv16Annotate(t, ns, "z-cfg", "no") // z not ready; the user's handler aborts the event
	controlplanetest.Eventually(t, wait, "the user's handler aborted z-cfg's event", func() bool { return user.did.Load() })
	advCreateApp(t, webapps, ns, "c", nil)
	controlplanetest.Eventually(t, wait, "c's ConfigMap created, or c reported waiting for z", func() bool {
		return advConfigMap(t, ns, "c-cm") != nil || strings.Contains(dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"), "z")
	})
	if advConfigMap(t, ns, "c-cm") != nil {
		t.Errorf("z has not been ready since before c was created, yet c's ConfigMap, which RequiresOwner z, was created "+
			"(c's condition %q; z's %q; b-cm still there: %v)", dependentstest.ReadyMessage(t.Context(), webapps, ns, "c"),
			dependentstest.ReadyMessage(t.Context(), webapps, ns, "z"), advConfigMap(t, ns, "b-cm") != nil)
	}
}
