package dependents_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// adv14PageFault is what the vouch list's second page gets.
type adv14PageFault int

const (
	adv14Expired     adv14PageFault = iota // 410 Expired continue token
	adv14ServerError                       // 500 on page 2, until released
)

// adv14VouchPaged: z was available (latched) and b, c, d's ConfigMaps
// RequiresOwnerAvailable z. At the restart z's rule says not ready, so
// only the vouched latch keeps b, c, d's ConfigMaps. The vouch list is
// forced into pages of one object (the request's limit rewritten), and
// its second page gets fault. A partial list must never read as "nothing
// exists": no ConfigMap deleted.
func adv14VouchPaged(t *testing.T, fm string, fault adv14PageFault) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var zReady, release atomic.Bool
	var faults atomic.Int32
	zReady.Store(true)
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "z":
			return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z-cfg"}}).
				ReadyWhen(func(runtime.Object) (bool, string) { return zReady.Load(), "z's rule" })}, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
			RequiresOwnerAvailable(ns, "z")}, nil
	}
	kinds := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, kinds, handler)
	advCreateApp(t, webapps, ns, "z", nil)
	for _, n := range []string{"b", "c", "d"} {
		advCreateApp(t, webapps, ns, n, nil)
	}
	controlplanetest.Eventually(t, wait, "b, c, d's ConfigMaps, once z is available", func() bool {
		return advConfigMap(t, ns, "b-cm") != nil && advConfigMap(t, ns, "c-cm") != nil && advConfigMap(t, ns, "d-cm") != nil
	})
	stopAndWait(t, stop, d)

	zReady.Store(false)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			vouchList := req.Method == http.MethodGet && q.Get("watch") == "" &&
				strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps") &&
				q.Get("labelSelector") == kubedescriptor.LabelManagedBy+"="+fm
			if !vouchList {
				return next.RoundTrip(req)
			}
			if q.Get("continue") != "" && !release.Load() {
				faults.Add(1)
				if fault == adv14Expired {
					return adv14Status(req, http.StatusGone, "Expired", "The provided continue parameter is too old"), nil
				}
				return adv14Status(req, http.StatusInternalServerError, "InternalError", "page 2 failed (test)"), nil
			}
			if q.Get("limit") != "" {
				q.Set("limit", "1")
				req = req.Clone(req.Context())
				req.URL.RawQuery = q.Encode()
			}
			return next.RoundTrip(req)
		})
	})
	opts := dependents.Options{FieldManager: fm, Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: time.Minute}
	d, webapps = dependentstest.Start(t, t.Context(), cfg, nil, fm, handler, opts)
	if fault == adv14ServerError {
		controlplanetest.Eventually(t, wait, "the first resync failing on page 2", func() bool {
			return loopFailureNames(d, "vouches for readiness")
		})
		if committedResync(d) {
			t.Fatalf("the first resync committed while page 2 of the vouch list failed")
		}
		release.Store(true)
	}
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	if faults.Load() == 0 {
		t.Fatalf("the vouch list never asked for a second page: the test did not page")
	}
	for _, n := range []string{"b", "c", "d"} {
		if advConfigMap(t, ns, n+"-cm") == nil || slices.Contains(ops(d, kvscheduler.OpDelete), "ConfigMap "+n+"-cm") {
			t.Errorf("z was available before the restart, yet %s's ConfigMap was deleted after a paged vouch list "+
				"(fault %d on page 2, %d faults); %s's condition %q", n, fault, faults.Load(), n, readyMessage(t, webapps, ns, n))
		}
	}
}

// adv14Status is an API server's Status answer with code and reason.
func adv14Status(req *http.Request, code int, reason, msg string) *http.Response {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + msg +
		`","reason":"` + reason + `","code":` + strconv.Itoa(code) + `}`
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
}

// TestAdv14VouchListExpiredContinueKeepsChildren: page 2 of the vouch
// list answers 410 Expired; client-go's pager lists whole again.
func TestAdv14VouchListExpiredContinueKeepsChildren(t *testing.T) {
	adv14VouchPaged(t, "adv14-expired", adv14Expired)
}

// TestAdv14VouchListPage2FailureIsNoVerdict: page 2 of the vouch list
// fails; the resync must not commit, and nothing is deleted.
func TestAdv14VouchListPage2FailureIsNoVerdict(t *testing.T) {
	adv14VouchPaged(t, "adv14-page2", adv14ServerError)
}
