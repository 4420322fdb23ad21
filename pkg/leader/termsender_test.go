package leader

import (
	"errors"
	"net/http"
	"testing"
)

// TestSenderSetInsideTheFenceIsStampedOrRefused: a wrapper between the
// fence and the wire that sets who a request is sent as is seen by the
// fence's probe: a create is stamped with the user its final headers
// name. A wrapper that sends the probe and the create as different
// senders, or answers the probe itself, leaves the create unsent
// (ErrUnstampable), never stamped with a user it is not sent as.
func TestSenderSetInsideTheFenceIsStampedOrRefused(t *testing.T) {
	e := holdingElector(t, "t1")
	stub := &stubTransport{answers: []stubAnswer{{201, `{}`}}}
	inner := func(set func(*http.Request)) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			set(r)
			return senderCheck{next: stub}.RoundTrip(r)
		})
	}
	f := &fence{e: e, next: inner(func(r *http.Request) { r.Header.Set("Impersonate-User", "tenant-bob") })}
	resp, err := f.RoundTrip(postCM(t))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if len(stub.sent) != 1 || len(stub.reviews) != 1 || stub.reviews[0].Header.Get("Impersonate-User") != "tenant-bob" {
		t.Fatalf("a create impersonated inside the fence: sent %d, reviews %v; want its review sent as tenant-bob", len(stub.sent), stub.reviews)
	}
	byMethod := inner(func(r *http.Request) {
		if r.Method == http.MethodPost {
			r.Header.Set("Impersonate-User", "tenant-post")
		}
	})
	for name, next := range map[string]http.RoundTripper{
		"a sender set otherwise for a POST than for a GET": byMethod,
		"a probe answered inside the fence": roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}}, nil
			}
			return senderCheck{next: stub}.RoundTrip(r)
		}),
	} {
		sent := len(stub.sent)
		resp, err := (&fence{e: e, next: next}).RoundTrip(postCM(t))
		if !errors.Is(err, ErrUnstampable) || len(stub.sent) != sent {
			t.Errorf("%s: %v, %v, sent %d; want ErrUnstampable, unsent", name, resp, err, len(stub.sent)-sent)
		}
	}
}
