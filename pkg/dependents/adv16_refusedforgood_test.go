package dependents_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// TestAdv16OneRecordRefusedForGoodStopsEveryOwner: the API server refuses
// for good the lariat.dev/held-without record of one object, b's
// ConfigMap (a webhook or policy that forbids that annotation on it, here
// a 403 for every patch of its -held field manager on b-cm). b-cm
// RequiresOwner z, and z stops being ready: every event and every healing
// resync aborts on that one record, until the loop gives up
// (MaxFailedHealings, 1 here, 5 by default) and aborts for good. WebApp q,
// created then and unrelated to z and b, never got its ConfigMap: one
// object's refused annotation stopped every owner of the registration, as
// a handler failing for one owner did before issue 27's fix
// (TestAdvOneFailingOwnerStopsEveryOwnerAfterARestart). Now a refusal for
// good is b's failure, logged naming b and the refusal, the event goes on
// (b-cm is deleted as its requirement went), and q is handled.
func TestAdv16OneRecordRefusedForGoodStopsEveryOwner(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv16-forgood"
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "q" {
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "q-cm"}})}, nil
		}
		return zRequirerObjects(ns, app), nil
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/b-cm") &&
				req.URL.Query().Get("fieldManager") == fm+"-held" {
				return adv14Status(req, http.StatusForbidden, "Forbidden", "the annotation lariat.dev/held-without is not allowed on b-cm"), nil
			}
			return next.RoundTrip(req)
		})
	})
	log, hook := logtest.NewNullLogger()
	lc := dependents.DefaultEventLoopConfig()
	lc.DelayAfterErrorHealing = eventloop.Duration{Duration: 100 * time.Millisecond}
	lc.MaxAfterErrorHealingDelay = eventloop.Duration{Duration: time.Second}
	lc.MaxFailedHealings = 1
	opts := dependents.Options{FieldManager: fm, Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Logger: log, StopTimeout: time.Minute, EventLoop: &lc}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, fm, handler, opts)
	startZAndB(t, webapps, ns)

	adv16Annotate(t, ns, "z-cfg", "no") // b-cm's record is needed from now on, and refused for good
	controlplanetest.Eventually(t, wait, "a warning naming b and the refused record", func() bool {
		for _, e := range hook.AllEntries() {
			if err, _ := e.Data[logrus.ErrorKey].(error); e.Level == logrus.WarnLevel && strings.Contains(e.Message, ns+"/b") &&
				err != nil && strings.Contains(err.Error(), "not allowed on b-cm") {
				return true
			}
		}
		return false
	})
	advCreateApp(t, webapps, ns, "q", nil)
	controlplanetest.Eventually(t, wait, "q's ConfigMap", func() bool {
		if advConfigMap(t, ns, "q-cm") != nil {
			return true
		}
		if err := d.Loop().Health(); err != nil {
			t.Fatalf("q's ConfigMap is never created: the registration's loop gave up on b-cm's record "+
				"(q's condition %q): %v", readyMessage(t, webapps, ns, "q"), err)
		}
		return false
	})
	controlplanetest.Eventually(t, wait, "b-cm deleted, its requirement gone", func() bool { return advConfigMap(t, ns, "b-cm") == nil })
	if n := loopFailureCount(d, "held without"); n != 0 {
		t.Errorf("%d events aborted on b-cm's record refused for good, want none", n)
	}
}
