package leader

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCreateIsStampedWithItsSendersUser: the fence asks who the create's
// sender is with the create's own credentials, under the config's path
// prefix, once per term, and stamps the answer; a create whose sender it
// could not learn is not sent (unstamped, it would go unjudged).
func TestCreateIsStampedWithItsSendersUser(t *testing.T) {
	e := holdingElector(t, "t1")
	stub := &stubTransport{answers: []stubAnswer{{201, `{}`}}}
	f := &fence{e: e, prefix: "/k8s/clusters/c1", next: stub}
	for range 2 {
		req := postCM(t)
		req.URL.Path = "/k8s/clusters/c1" + req.URL.Path
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("Impersonate-User", "someone")
		resp, err := f.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for i, b := range stub.sent {
		if !strings.Contains(b, `"lariat.dev/term-user":"op"`) {
			t.Errorf("create %d not stamped with its sender: %s", i, b)
		}
	}
	if len(stub.reviews) != 1 {
		t.Fatalf("asked %d times in one term, want once", len(stub.reviews))
	}
	r := stub.reviews[0]
	if r.Method != http.MethodPost || r.URL.Path != "/k8s/clusters/c1/apis/authentication.k8s.io/v1/selfsubjectreviews" ||
		r.Header.Get("Authorization") != "Bearer secret" || r.Header.Get("Impersonate-User") != "someone" {
		t.Errorf("the review went as %s %s with headers %v", r.Method, r.URL, r.Header)
	}
	e.renewedFor("t2", time.Minute)
	resp, err := f.RoundTrip(postCM(t))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if len(stub.reviews) != 2 {
		t.Errorf("asked %d times over two terms, want twice", len(stub.reviews))
	}

	failing := &stubTransport{answers: []stubAnswer{{201, `{}`}}, reviewStatus: http.StatusNotFound}
	if _, err := (&fence{e: e, next: failing}).RoundTrip(postCM(t)); err == nil || len(failing.sent) != 0 {
		t.Errorf("a create whose sender could not be learned: %v, sent %d times; want an error, not sent", err, len(failing.sent))
	}
}
