package dependents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdv16KindEstablishedAfterTheStartupDeadlineIsNeverHandled: one of
// Options.Kinds is a custom kind whose CRD is established only after the
// registration started (an operator deployed with, or before, its CRDs).
// The bridge rightly holds the first resync until every kind is listed,
// and the loop waits past its StartupResyncDeadline (2 s here; 30 s by
// default), reporting the late kind in its Health, never aborting. The
// attacker (h27a) read that report as the loop's death; the registration
// does handle the owner once the CRD is established. What was missing:
// the owner's condition said only "not computed yet", not what the
// registration waits for. It names the kind now.
func TestAdv16KindEstablishedAfterTheStartupDeadlineIsNeverHandled(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	dir, gvk, _, err := testkinds.NewLateKind(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
	lc := dependents.DefaultEventLoopConfig()
	const deadline = 2 * time.Second
	lc.StartupResyncDeadline.Duration = deadline
	opts := dependents.Options{FieldManager: "adv16-latecrd", Logger: controlplanetest.QuietLogger(), EventLoop: &lc,
		Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap"), gvk}}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv16-latecrd", handler, opts)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	go func() { _ = f.Start(t.Context(), 2) }() // returns once every kind synced
	t.Cleanup(func() {
		waitCtx, done := context.WithTimeout(context.WithoutCancel(t.Context()), wait)
		defer done()
		_ = d.Wait(waitCtx)
	})
	advCreateApp(t, webapps, ns, "a", nil)
	// The CRD is established after the loop's StartupResyncDeadline: what
	// is waited for is that moment, not a race.
	controlplanetest.Eventually(t, wait, "the startup resync deadline passed", func() bool {
		return time.Since(started) > 2*deadline
	})
	controlplanetest.Eventually(t, wait, "a's condition naming the kind waited for", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), gvk.Kind)
	})
	if st := d.Loop().Status().State; st == eventloop.StateAborted {
		t.Fatalf("the loop aborted while waiting for the kind: %v", d.Loop().Health())
	}
	if err := controlplane.InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's ConfigMap, once every kind lists", func() bool {
		if advConfigMap(t, ns, "a-cm") != nil {
			return true
		}
		if d.Loop().Status().State == eventloop.StateAborted {
			t.Fatalf("the registration's loop is dead once its CRD is established (a's condition %q): %v",
				readyMessage(t, webapps, ns, "a"), d.Loop().Health())
		}
		return false
	})
}
