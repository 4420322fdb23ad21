package leader

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"k8s.io/client-go/rest"
)

// NotLeaderError is the error of a write that Fence refused.
type NotLeaderError struct {
	// Method and URL name the refused request.
	Method, URL string
	// Identity is the refusing replica's.
	Identity string
	// StaleTerm is true when the replica leads, but a handler that began
	// in an earlier term of it, and outlived that term, still handles the
	// object written: the write may be that handler's, which acts on what
	// it read in a term that is over.
	StaleTerm bool
}

// Error says which request was refused, and why.
func (e *NotLeaderError) Error() string {
	if e.StaleTerm {
		return fmt.Sprintf("leader: %s %s refused: a handler of an ended term of %s still handles the object", e.Method, e.URL, e.Identity)
	}
	return fmt.Sprintf("leader: %s %s refused: %s does not hold the lease", e.Method, e.URL, e.Identity)
}

// Fence returns a copy of cfg whose requests are bound to the term:
//
//   - Writes (any method but GET, HEAD and OPTIONS) fail with a
//     *NotLeaderError unless e holds the lease at the moment the request
//     is issued.
//   - Writes, and reads of one object (not lists and watches), issued
//     while e holds the lease end, on this side, at the renew deadline of
//     the last successful renewal: the moment the fence closes and the
//     work's context ends, a lease duration minus the renew deadline
//     before any other replica can take over. A handler stuck in a call
//     on a stalled connection returns then, instead of going on while the
//     next leader handles its object.
//   - A write of an object that a handler of a factory built with
//     FactoryOptions is handling carries a resourceVersion precondition
//     (the copy the handler was given, or what the pass's last write of it
//     returned), unless it carries one of its own, so that a write that
//     sat in the network past the term fails with a conflict once anyone
//     else wrote the object instead of landing after them.
//   - A create (a POST to a collection) is stamped with the term it is
//     issued in, in labels: TermIDLabel the term's ID, TermLeaseLabel the
//     Lease, TermUserLabel the user the create is sent as (asked of the
//     API server once per term and sender, the sender told by the
//     request's headers as they go on the wire, under every wrapper of
//     cfg: termsender.go). A PUT or an apply, which may
//     create, is stamped so when it only creates (an apply of
//     createOnlyVersion) or carries a stamp already (copied from another
//     object): the current term's goes in place of what it carried. A
//     body is read by its Content-Type (JSON, YAML, protobuf); one the
//     fence cannot read fails unsent (ErrUnstampable). With
//     InstallTermPolicy's ValidatingAdmissionPolicy bound to the Lease, the
//     API server refuses a stamped create once the Lease is in another term
//     (or gone), so a create that sat in the network past the term does
//     not land after the next leader acted (termstamp.go, termpolicy.go).
//   - A write that may create an object of a kind the API server never
//     runs admission policies on (ValidatingAdmissionPolicies,
//     MutatingAdmissionPolicies and their bindings) fails with an
//     *UnjudgedCreateError in every term: its stamp would never be
//     checked (fence_unjudged.go).
//   - A write of an object that a handler begun in an earlier term is
//     still handling (it outlived that term's stop grace period) fails
//     with a *NotLeaderError whose StaleTerm is set, even once e leads
//     again: that handler acts on what it read in a term that is over.
//
// Build the factories and clients of the work that fn runs from it. Reads
// and watches go through, so informers stay warm on standbys, and so do
// reviews (creates of authorization.k8s.io and authentication.k8s.io,
// questions the API server answers and stores nothing of: see isReview),
// unstamped. The lease's
// own client must not go through the fence.
func (e *Elector) Fence(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	prefix := ""
	if u, _, err := rest.DefaultServerUrlFor(cfg); err == nil {
		prefix = u.Path // a bad Host fails every request of c anyway
	}
	// The fence wraps every wrapper the config has, and senderCheck goes
	// under them all, where a request is as it is sent (termsender.go).
	inner := c.WrapTransport
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		next := http.RoundTripper(senderCheck{next: rt})
		if inner != nil {
			next = inner(next)
		}
		return &fence{e: e, prefix: prefix, next: next}
	}
	return c
}

type fence struct {
	e *Elector
	// prefix is the path of the config's Host, under which client-go puts
	// every request's path.
	prefix string
	next   http.RoundTripper
	// who is the username this config sends as, learned once per term
	// (termuser.go).
	who whoAmI
}

// RoundTrip sends req on bound to the term, as Fence says.
func (f *fence) RoundTrip(req *http.Request) (*http.Response, error) {
	t := parseTarget(req.URL, f.prefix)
	write := isWrite(req.Method, t)
	until := f.e.holdingUntil()
	if write && until.IsZero() {
		return nil, f.notLeader(req, false)
	}
	restamp := false
	if write {
		kind, r, err := f.stampOf(req, t)
		if err != nil {
			return nil, err
		}
		if req = r; kind != noStamp && isUnjudged(t) {
			return nil, refuseUnjudged(req, t) // never judged: fence_unjudged.go
		}
		switch kind {
		case createStamp:
			return f.create(req) // stamped with its term (termstamp.go)
		case restampInner:
			restamp = true
		}
	}
	var cancel context.CancelFunc
	if !until.IsZero() && (write || t.obj.Name != "" && !t.watch) {
		var ctx context.Context
		ctx, cancel = context.WithDeadline(req.Context(), until)
		req = req.WithContext(ctx)
	}
	rv, conditional, stale := "", false, false
	if write && t.obj.Name != "" {
		rv, conditional, stale = f.e.passes.expected(t.obj)
	}
	if stale {
		cancelIf(cancel)
		return nil, f.notLeader(req, true)
	}
	termID := ""
	if restamp {
		// A handled object's write that may create (it carries a
		// stamp copied from elsewhere, or is a create-only apply):
		// this term's stamp goes in place of any it carries.
		r, id, err := f.restamp(req)
		if err != nil {
			cancelIf(cancel)
			return nil, err
		}
		req, termID = r, id
	}
	if conditional {
		r, err := withPrecondition(req, rv, t.sub)
		if err != nil {
			cancelIf(cancel)
			return nil, err
		}
		req = r
	}
	resp, err := f.send(req, termID)
	if err == nil && conditional && resp.StatusCode < 300 {
		err = f.recordWrite(t, rv, resp)
	}
	if err != nil {
		cancelIf(cancel)
		return nil, err
	}
	if cancel != nil {
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	}
	return resp, nil
}

// send sends req on. A restamped write (termID is its term) is sent as a
// create is (sendCreate): again, while the API server's view of the
// Lease lags the term.
func (f *fence) send(req *http.Request, termID string) (*http.Response, error) {
	if termID != "" {
		return f.sendCreate(req, termID)
	}
	return f.next.RoundTrip(req)
}

// recordWrite tells the passes what a conditional write of t, expected
// at rv, returned (resp, whose body it reads and puts back; closed on an
// error).
func (f *fence) recordWrite(t target, rv string, resp *http.Response) error {
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	f.e.passes.wrote(t.obj, rv, resourceVersionOf(resp.Header.Get("Content-Type"), b))
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// restamp returns req with the current term's stamp, and the term's ID,
// or a *NotLeaderError if the term ended meanwhile.
func (f *fence) restamp(req *http.Request) (*http.Request, string, error) {
	if _, termID := f.e.holdingTerm(); termID != "" {
		r, err := f.stamped(req, termID)
		return r, termID, err
	}
	return nil, "", f.notLeader(req, false)
}

// isWrite reports whether a request of method to t is a write the fence
// binds to the term: any method but GET, HEAD and OPTIONS, except the
// POST of a review (see isReview).
func isWrite(method string, t target) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	case http.MethodPost:
		return !isReview(t)
	}
	return true
}

// notLeader closes the body of req, which the fence refuses unsent, and
// returns the *NotLeaderError that refuses it (stale: see
// NotLeaderError.StaleTerm).
func (f *fence) notLeader(req *http.Request, stale bool) error {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &NotLeaderError{Method: req.Method, URL: req.URL.String(), Identity: f.e.Identity(), StaleTerm: stale}
}

// The API groups authorization.k8s.io and authentication.k8s.io hold
// only creates that are questions, not writes: SubjectAccessReview, LocalSubjectAccessReview,
// SelfSubjectAccessReview, SelfSubjectRulesReview (authorization.k8s.io),
// TokenReview and SelfSubjectReview (authentication.k8s.io). The API
// server stores none of them, changes nothing, and refuses one whose
// metadata is not empty, so the stamp of a create would make every one
// Invalid, in every term. Having no effect, a review sent late changes
// nothing either: the fence lets them through unstamped, also on a
// standby (a webhook or a delegating authorizer runs on every replica).
// Every other group's creates are stamped: a new kind of review elsewhere
// would be refused, never a stored object let through unfenced. (Both
// groups hold only reviews: neither stores any kind.)
//
// isReview reports whether t is a collection of those groups (a create of
// a review when POSTed).
func isReview(t target) bool {
	if t.obj.Name != "" {
		return false
	}
	switch t.obj.Group {
	case "authorization.k8s.io", "authentication.k8s.io":
		return true
	}
	return false
}

func cancelIf(cancel context.CancelFunc) {
	if cancel != nil {
		cancel()
	}
}

// cancelOnClose ends a request's deadline context once its body is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
