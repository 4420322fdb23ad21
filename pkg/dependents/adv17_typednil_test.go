package dependents_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv17TypedNilObjectOfOneOwnerDeletesEveryOwnersObjects: a handler
// returns, for owner p, an object wrapping a nil pointer
// (dependents.Of((*corev1.ConfigMap)(nil)): a lookup that found nothing,
// passed on unchecked). The builder guards a nil *Object and a nil
// interface, not a typed nil: preparing it panics inside the
// registration's Update, which the loop turns into a handler error, not an
// abort, so the event is committed half done; the healing resync then
// panics in the same place, before it has put any owner's values, and a
// full resync whose handler failed is committed too: the scheduler takes
// the empty set for the desired state and deletes every owner's objects.
// q's ConfigMap, wanted throughout, must stay, and p must be failed alone
// (an error "object 0 is nil" in its condition).
func TestAdv17TypedNilObjectOfOneOwnerDeletesEveryOwnersObjects(t *testing.T) {
	var missing *corev1.ConfigMap // a lookup that found nothing
	d, webapps, ns := startWithABadOwner(t, "adv17-typednil", missing)
	// p's event fails; the after-error healing resync (1 s) follows it.
	controlplanetest.Eventually(t, wait, "a resync after p's event", func() bool {
		failedAt := -1
		for i, r := range d.Loop().History().Records() {
			if failedAt < 0 && r.Method == eventloop.Update && slices.ContainsFunc(r.Handlers, func(h eventloop.HandlerRecord) bool {
				return h.Error != nil
			}) {
				failedAt = i
			}
			if failedAt >= 0 && i > failedAt && r.Method.IsResync() {
				return true
			}
		}
		// Fixed: p's event does not fail, p is reported failed.
		return has(dependentstest.ReadyMessage(t.Context(), webapps, ns, "p"), "nil")
	})
	if slices.Contains(ops(d, kvscheduler.OpDelete), "ConfigMap q-cm") || advConfigMap(t, ns, "q-cm") == nil {
		t.Errorf("q's ConfigMap, wanted throughout, was deleted after p's handler returned a typed nil object "+
			"(deletes %v; q's condition %q; p's %q; loop health %v; handler errors %q)", ops(d, kvscheduler.OpDelete),
			dependentstest.ReadyMessage(t.Context(), webapps, ns, "q"), dependentstest.ReadyMessage(t.Context(), webapps, ns, "p"),
			d.Loop().Health(), adv17HandlerErrors(d))
	}
}

// adv17HandlerErrors returns the first line of each handler error in the
// loop's history, with its event's method.
func adv17HandlerErrors(d *dependents.Dependents) []string {
	var out []string
	for _, r := range d.Loop().History().Records() {
		for _, h := range r.Handlers {
			if h.Error != nil {
				line, _, _ := strings.Cut(h.Error.Error(), "\n")
				out = append(out, r.Method.String()+": "+line)
			}
		}
	}
	return out
}

// startWithABadOwner runs a registration whose handler returns, for owner
// q, a ConfigMap q-cm and, for owner p, the object bad; it returns once q
// is ready and p is created. fm, with a suffix per run (a later run of
// -count must not take this one's objects for its own), is the field
// manager.
func startWithABadOwner(t *testing.T, fm string, bad runtime.Object) (*dependents.Dependents, democtl.WebAppController, string) {
	t.Helper()
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if app.Name == "p" {
			return []*dependents.Object{dependents.Of(bad)}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}})}, nil
	}
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: time.Second}
	opts := dependents.Options{FieldManager: fm + "-" + ns[len(ns)-5:], Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute, EventLoop: &lc}
	ctx, stop := context.WithCancel(t.Context())
	t.Cleanup(stop)
	d, webapps := dependentstest.Start(t, ctx, cp.Config(), nil, opts.FieldManager, handler, opts)
	advCreateApp(t, webapps, ns, "q", nil)
	controlplanetest.Eventually(t, wait, "q's ConfigMap, q ready", func() bool {
		return advConfigMap(t, ns, "q-cm") != nil && adv13Ready(t, webapps, ns, "q")
	})
	advCreateApp(t, webapps, ns, "p", nil)
	return d, webapps, ns
}
