package dependents_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv8TwoRegistrationsSharingAFieldManagerDeleteEachOthersObjects:
// a user porting two wrangler generating handlers of one owner kind (each
// with its own set ID, one apply field manager for the operator) registers
// them as two dependents registrations on one factory, each with its own
// Condition, and the operator's one FieldManager, both keeping
// ConfigMaps. Each registration reads every object of its kinds labelled
// with its field manager as its own, so at the operator's next start each
// one's first resync would read the other's ConfigMap as its leftover and
// delete it (in wrangler a set ID scopes the prune). The second
// registration is refused, with an error naming both, and the first
// keeps its owner's objects across a restart: nothing is deleted.
func TestAdv8TwoRegistrationsSharingAFieldManagerDeleteEachOthersObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(suffix string) dependents.Handler[*demov1.WebApp] {
		return func(app *demov1.WebApp) ([]*dependents.Object, error) {
			if app.Namespace != ns {
				return nil, nil
			}
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + suffix}})}, nil
		}
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	created := false
	// startBoth registers both on one factory and starts it; the
	// registrations it returns are the accepted ones.
	startBoth := func(ctx context.Context) []*dependents.Dependents {
		f, webapps := dependentstest.Factory(t, cp.Config(), nil)
		opts := dependents.Options{FieldManager: "adv8-sharedfm", Kinds: kinds, Logger: controlplanetest.QuietLogger()}
		first, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv8-one", handler("-one"), opts)
		if err != nil {
			t.Fatal(err)
		}
		accepted := []*dependents.Dependents{first}
		opts.Condition = "Second"
		second, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv8-two", handler("-two"), opts)
		switch {
		case err == nil:
			t.Errorf("a second registration sharing the FieldManager %q of registration adv8-one on one factory was accepted", opts.FieldManager)
			accepted = append(accepted, second)
		case !strings.Contains(err.Error(), `"adv8-one"`) || !strings.Contains(err.Error(), `"adv8-two"`) ||
			!strings.Contains(err.Error(), opts.FieldManager):
			t.Errorf("the refusal of the second registration names neither both registrations nor the field manager: %v", err)
		}
		if err := f.Start(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if !created {
			created = true
			advCreateApp(t, webapps, ns, "a", nil)
		}
		return accepted
	}
	waitAll := func(regs []*dependents.Dependents) {
		for _, d := range regs {
			waitCtx, cancel := context.WithTimeout(t.Context(), wait)
			if err := d.Wait(waitCtx); err != nil {
				t.Error(err)
			}
			cancel()
		}
	}
	ctx, stop := context.WithCancel(t.Context())
	regs := startBoth(ctx)
	controlplanetest.Eventually(t, wait, "the accepted registrations' ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-one") != nil && (len(regs) == 1 || advConfigMap(t, ns, "a-two") != nil)
	})
	stop()
	waitAll(regs)

	ctx, stop = context.WithCancel(t.Context())
	defer stop()
	regs = startBoth(ctx)
	controlplanetest.Eventually(t, wait, "the accepted registrations' first resyncs committed", func() bool {
		for _, d := range regs {
			if !committedResync(d) {
				return false
			}
		}
		return true
	})
	var deleted, all []string
	for _, d := range regs {
		dels := ops(d, kvscheduler.OpDelete)
		all = append(all, fmt.Sprint(dels))
		for _, obj := range dels {
			if obj == "ConfigMap a-one" || obj == "ConfigMap a-two" {
				deleted = append(deleted, obj)
			}
		}
	}
	if len(deleted) > 0 {
		t.Errorf("WebApp a still wants its ConfigMaps, unchanged, yet the restart deleted %v (each registration's deletes: %v)",
			deleted, all)
	}
	if advConfigMap(t, ns, "a-one") == nil {
		t.Error("the first registration's ConfigMap a-one is gone after the restart")
	}
	stop()
	waitAll(regs)
}
