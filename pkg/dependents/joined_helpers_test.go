package dependents_test

import (
	"testing"
	"time"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
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
	lc := eventloop.DefaultConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 10 * time.Minute}
	lc.MaxAfterErrorHealingDelay = lc.DelayAfterErrorHealing
	j := adv18JoinWith(t, adv18Setup{name: name, lc: lc, handler: handler, user: user, userFirst: userFirst})
	return j.d, j.webapps
}
