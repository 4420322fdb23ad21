package dependents_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
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
	handler := latchHandler(ns, "z", &zReady, nil)
	latchOwner(t, ns, fm, handler, "z", []string{"b", "c", "d"}, nil)

	zReady.Store(false)
	d, webapps := startThrough(t, t.Context(), fm, handler, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
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
