package leader

import (
	"io"
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
	f := &fence{e: e, prefix: "/k8s/clusters/c1", next: senderCheck{next: stub}}
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
	if _, err := (&fence{e: e, next: senderCheck{next: failing}}).RoundTrip(postCM(t)); err == nil || len(failing.sent) != 0 {
		t.Errorf("a create whose sender could not be learned: %v, sent %d times; want an error, not sent", err, len(failing.sent))
	}
}

// TestCreatesAreStampedWithEachSendersUser: one fence sends as several
// users when requests carry their own impersonation or credentials; each
// create is stamped with the user it is sent as (asked once per term and
// sender), never with a user learned from another request, in either
// order.
func TestCreatesAreStampedWithEachSendersUser(t *testing.T) {
	e := holdingElector(t, "t1")
	reviews := 0
	var sent []string
	next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/selfsubjectreviews") {
			reviews++
			user := "op"
			if u := req.Header.Get("Impersonate-User"); u != "" {
				user = u
			} else if req.Header.Get("Authorization") == "Bearer other" {
				user = "other"
			}
			body := `{"kind":"SelfSubjectReview","status":{"userInfo":{"username":"` + user + `"}}}`
			return &http.Response{StatusCode: 201, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}}, nil
		}
		b, _ := io.ReadAll(req.Body)
		sent = append(sent, string(b))
		return &http.Response{StatusCode: 201, Body: io.NopCloser(strings.NewReader(`{}`)), Header: http.Header{}}, nil
	})
	f := &fence{e: e, next: senderCheck{next: next}}
	for i, c := range []struct{ header, value, user string }{
		{"Impersonate-User", "tenant-alice", "tenant-alice"},
		{"", "", "op"},
		{"Impersonate-User", "tenant-bob", "tenant-bob"},
		{"Authorization", "Bearer other", "other"},
		{"Impersonate-User", "tenant-alice", "tenant-alice"},
		{"", "", "op"},
	} {
		req := postCM(t)
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		resp, err := f.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if want := `"lariat.dev/term-user":"` + c.user + `"`; !strings.Contains(sent[i], want) {
			t.Errorf("create %d sent as %s %q: %s, want %s", i, c.header, c.value, sent[i], want)
		}
	}
	if reviews != 4 {
		t.Errorf("%d SelfSubjectReviews for 4 senders, want one each", reviews)
	}
}
