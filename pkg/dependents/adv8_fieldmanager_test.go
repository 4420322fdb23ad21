package dependents_test

import (
	"context"
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
// ConfigMaps. Options.FieldManager says "two registrations must not
// share it", yet nothing refuses it (as generic.Factory.Reserve refuses a
// shared condition): both are accepted, and at the operator's next
// start each registration's first resync reads the other's ConfigMap,
// labelled with its field manager and wanted by nothing it computed, as
// its own leftover, and deletes it. In wrangler a set ID scopes the
// prune: another handler's objects are never deleted.
func TestAdv8TwoRegistrationsSharingAFieldManagerDeleteEachOthersObjects(t *testing.T) {
	advOpen(t, "two registrations of one factory sharing a FieldManager delete each other's objects at a restart")
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
	startBoth := func(ctx context.Context) (first, second *dependents.Dependents, refused bool) {
		f, webapps := dependentstest.Factory(t, cp.Config(), nil)
		opts := dependents.Options{FieldManager: "adv8-sharedfm", Kinds: kinds, Logger: controlplanetest.QuietLogger()}
		first, err := dependents.Register(ctx, f, webapps, webAppStatus(), "adv8-one", handler("-one"), opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Condition = "Second"
		second, err = dependents.Register(ctx, f, webapps, webAppStatus(), "adv8-two", handler("-two"), opts)
		if err != nil {
			t.Logf("the second registration was refused: %v", err)
			return first, nil, true
		}
		if err := f.Start(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if !created {
			created = true
			advCreateApp(t, webapps, ns, "a", nil)
		}
		return first, second, false
	}
	ctx, stop := context.WithCancel(t.Context())
	first, second, refused := startBoth(ctx)
	if refused {
		stop()
		return // refused with an error: nothing to lose
	}
	controlplanetest.Eventually(t, wait, "both registrations' ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-one") != nil && advConfigMap(t, ns, "a-two") != nil
	})
	stop()
	for _, d := range []*dependents.Dependents{first, second} {
		waitCtx, cancel := context.WithTimeout(t.Context(), wait)
		if err := d.Wait(waitCtx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}

	ctx, stop = context.WithCancel(t.Context())
	defer stop()
	first, second, _ = startBoth(ctx)
	controlplanetest.Eventually(t, wait, "both first resyncs committed", func() bool {
		return committedResync(first) && committedResync(second)
	})
	var deleted []string
	for _, d := range []*dependents.Dependents{first, second} {
		for _, obj := range ops(d, kvscheduler.OpDelete) {
			if obj == "ConfigMap a-one" || obj == "ConfigMap a-two" {
				deleted = append(deleted, obj)
			}
		}
	}
	if len(deleted) > 0 {
		t.Errorf("WebApp a still wants ConfigMaps a-one and a-two, unchanged, yet the restart deleted %v "+
			"(first registration's deletes %v, second's %v)", deleted,
			ops(first, kvscheduler.OpDelete), ops(second, kvscheduler.OpDelete))
	}
	stop()
	for _, d := range []*dependents.Dependents{first, second} {
		waitCtx, cancel := context.WithTimeout(t.Context(), wait)
		_ = d.Wait(waitCtx)
		cancel()
	}
}
