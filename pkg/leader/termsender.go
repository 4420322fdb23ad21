package leader

import (
	"context"
	"fmt"
	"net/http"
)

// Who a request is sent as is settled by every wrapper of the config: the
// ones client-go adds (credentials, impersonation) run outside the fence,
// but a wrapper already in the config given to Fence (cfg.Wrap before
// Fence: an operator that impersonates the tenant its context names, an
// oauth2 transport that sets Authorization) runs inside it, after the
// fence looked. So the fence does not read the sender from the headers it
// sees: Fence puts a sender probe innermost, under every wrapper of the
// config, where the request is as it goes on the wire.
//
//   - Before stamping a create, the fence sends a probe (a GET carrying
//     the create's context and headers) through the wrappers inside it;
//     the innermost one answers it without sending it and says who it is
//     sent as (identityKey of its final headers). The fence learns that
//     sender's username by a SelfSubjectReview, sent the same way.
//   - The stamped create, and the review, carry the sender the fence
//     stamped for; the innermost wrapper fails one whose final headers
//     name another unsent (ErrUnstampable): a wrapper that sends a GET
//     and a POST of one context as two senders cannot be foreseen, and a
//     create stamped with another sender's name would be admitted
//     unjudged.
//
// A wrapper inside the fence that answers a GET without sending it on (a
// cache) leaves the probe unanswered: the create fails unsent. A client
// certificate is the TLS transport's, below every wrapper, and is not
// told apart (the fenced config's certificate is one sender).

// senderProbe is the context value of a probe: the innermost wrapper
// fills key with the identityKey of the probe's final headers.
type senderProbe struct {
	key      string
	answered bool
}

// probeKey and sentAsKey are context keys: the probe of a request, and
// the identityKey a stamped request must be sent with.
type (
	probeKey  struct{}
	sentAsKey struct{}
)

// senderCheck is the innermost round tripper of a fenced config: it
// answers probes and refuses a stamped request sent as another sender
// than the one it was stamped for.
type senderCheck struct{ next http.RoundTripper }

func (s senderCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	if p, ok := req.Context().Value(probeKey{}).(*senderProbe); ok {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		p.key, p.answered = identityKey(req.Header), true
		return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Header: http.Header{},
			Body: http.NoBody, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	if want, ok := req.Context().Value(sentAsKey{}).(string); ok && identityKey(req.Header) != want {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s %s is sent with other credentials or impersonation than the fence identified "+
			"its sender by (a wrapper inside the fence sets them otherwise for a probe than for the request)", ErrUnstampable, req.Method, req.URL)
	}
	return s.next.RoundTrip(req)
}

// sender returns the identityKey req is sent as, below every wrapper
// inside the fence: a probe of req's context and headers, sent through
// them and answered by the innermost (senderCheck).
func (f *fence) sender(req *http.Request) (string, error) {
	p := &senderProbe{}
	r, err := http.NewRequestWithContext(context.WithValue(req.Context(), probeKey{}, p), http.MethodGet, "", http.NoBody)
	if err != nil {
		return "", err
	}
	u := *req.URL
	u.Path, u.RawPath, u.RawQuery = f.prefix+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "", ""
	r.URL, r.Host = &u, req.Host
	r.Header = req.Header.Clone()
	resp, err := f.next.RoundTrip(r)
	if err == nil {
		_ = resp.Body.Close()
	}
	if !p.answered {
		return "", fmt.Errorf("%w: %s %s: the fence could not tell who it is sent as (a wrapper inside the fence did not pass its probe on: %v)",
			ErrUnstampable, req.Method, req.URL, err)
	}
	return p.key, nil
}

// sentAs returns req bound to be sent as key (senderCheck).
func sentAs(req *http.Request, key string) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), sentAsKey{}, key))
}
