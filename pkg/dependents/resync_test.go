package dependents_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestFailedFirstResyncKeepsTheOwnersObjects: after a restart, the handler
// fails for an owner whose objects exist; the loop's first resync must not
// commit (a full resync without the owner's values would delete them): it
// is aborted, and the ConfigMap stays, the same object.
func TestFailedFirstResyncKeepsTheOwnersObjects(t *testing.T) {
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := advStart(t, ctx, "keep-on-failure", cmKind, advConfigMaps)
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-kept"})
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "a-kept") != nil })
	before := advConfigMap(t, ns, "a-kept")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}

	failing := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns {
			return nil, errors.New("cannot compute it now")
		}
		return advConfigMaps(app)
	}
	d, _ = advStart(t, t.Context(), "keep-on-failure", cmKind, failing)
	controlplanetest.Eventually(t, wait, "the first resync, failed", func() bool {
		for _, r := range d.Loop().History().Records() {
			for _, h := range r.Handlers {
				if r.Method.IsResync() && h.Error != nil {
					return true
				}
			}
		}
		return false
	})
	for _, r := range d.Loop().History().Records() {
		if r.Method.IsResync() && r.Txn != nil {
			t.Errorf("a resync whose handler failed was committed: %s", r.Description)
		}
	}
	for _, op := range ops(d, kvscheduler.OpDelete) {
		if op == "ConfigMap a-kept" {
			t.Error("the failed first resync deleted ConfigMap a-kept")
		}
	}
	if now := advConfigMap(t, ns, "a-kept"); now == nil || now.UID != before.UID {
		t.Errorf("ConfigMap a-kept was deleted (or created again) by the failed first resync: %v", now)
	}
}
