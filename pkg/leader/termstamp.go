package leader

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Term stamps: a create is the one write a resourceVersion precondition
// cannot fence (the API server checks nothing on a create but "does not
// exist yet"), so a create sent inside a term over a connection that
// stalled could land after another replica decided the object should not
// exist. Every term writes an ID of its own into its Lease (the label
// TermIDLabel, with each acquisition and renewal), and every create sent
// through Fence's config carries, in labels, the term it was issued in
// (TermLeaseLabel, TermIDLabel, TermUserLabel). The
// ValidatingAdmissionPolicy of InstallTermPolicy, whose parameter is the
// Lease, refuses a create whose stamp names the Lease but not its current
// term (termpolicy.go). The stamp is in labels, not annotations, because
// annotations have a total size limit (256 KiB) that an object at the
// limit would exceed once stamped; label values hold 63 characters, so
// the stamp carries the term's ID (which names holder and term together)
// rather than the holder's identity.

const (
	// TermLeaseLabel is stamped on every object created through Fence's
	// config: it names the Lease (TermLeaseLabelValue), so that the
	// Lease's policy binding selects the creates stamped with its terms,
	// and no other object.
	TermLeaseLabel = "lariat.dev/term-lease"
	// TermIDLabel is the label on the Lease naming its current term: each
	// term of an Elector draws an ID of its own and writes it with every
	// acquisition and renewal, so that a term that ended and the next term
	// of the same holder are told apart. Stamped on an object created
	// through Fence's config, it names the term the create was sent in.
	TermIDLabel = "lariat.dev/term-id"
	// TermUserLabel is stamped beside TermIDLabel: TermUserLabelValue of
	// the username the fenced config sends the create as (asked of the
	// API server, see termuser.go). The term policy judges a stamped
	// create only when it is sent by that user, so a copy or restore of
	// the object by another identity (a user's kubectl, a backup tool) is
	// never refused. A username that has no such value is not stamped:
	// the create is then judged whoever sends it.
	TermUserLabel = "lariat.dev/term-user"
	// TermAnnotation is the stamp of Lariat versions before the labels
	// (TermIDLabel): "<lease namespace>/<lease name>/<holder>/<term ID>".
	// The fence writes it no more, and removes it from what it stamps;
	// the term policy still judges a create that carries it and no
	// TermIDLabel, by the rules it was written under.
	TermAnnotation = "lariat.dev/term"
	// TermUserAnnotation is the username beside TermAnnotation, of the
	// versions before the labels (see TermAnnotation).
	TermUserAnnotation = "lariat.dev/term-user"
	// TermGroupLabel is the label on a Lease of a term group
	// (WithTermGroup): the group's TermGroupLabelValue, which the group's
	// creates are stamped with, and by which TermGroupBinding's paramRef
	// selects the group's Leases.
	TermGroupLabel = "lariat.dev/term-group"
	// TermEndedLabel, set on a Lease by someone other than its holder
	// (package shard's sharder, before it moves the objects of a member
	// whose Lease expired), names a term that is over although the Lease
	// still names it and its holder: the term policy refuses that term's
	// creates. Only a term group's Lease, held for one term, is ended so.
	TermEndedLabel = "lariat.dev/term-ended"
)

// TermLeaseLabelValue is the TermLeaseLabel value of creates fenced by the
// Lease namespace/name: "namespace.name", or, when that is longer than a
// label value may be, "h-" and a hash of it. It names one Lease: a
// namespace has no dot, and a hash has none. (Were two Leases to share it,
// the binding of one that is missing would refuse the other's creates.)
func TermLeaseLabelValue(namespace, name string) string {
	if v := namespace + "." + name; len(v) <= 63 {
		return v
	}
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return "h-" + hex.EncodeToString(sum[:12])
}

// TermUserLabelValue is the TermUserLabel value of creates sent as
// username, and ok is false when it has none. It is not a hash: the term
// policy computes the same value of the sender of each create it judges,
// in CEL, which has no hash function (the libraries of kube-apiserver's
// CEL environment, k8s.io/apiserver/pkg/cel/environment/base.go, hold
// none). So ':' becomes '.' and '@' becomes '_', and a value longer than
// 63 characters keeps its first and last 31, joined by '-'. Two users
// may share a value (the policy then judges both: a copy may be refused,
// never a stale create of the fence admitted). A username outside ASCII
// has none (CEL counts characters, not bytes, so the two could differ),
// nor one that is not a label value then.
func TermUserLabelValue(username string) (value string, ok bool) {
	for i := 0; i < len(username); i++ {
		if username[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	v := strings.NewReplacer(":", ".", "@", "_").Replace(username)
	if len(v) > 63 {
		v = v[:31] + "-" + v[len(v)-31:]
	}
	if v == "" || len(validation.IsValidLabelValue(v)) > 0 {
		return "", false
	}
	return v, true
}

// newTermID draws a term ID: 16 hex digits, random, so that no two terms
// of any holder share one.
func newTermID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// termLabels returns the labels a term writes on its Lease: the Elector's
// own and the term's ID.
func (e *Elector) termLabels(termID string) map[string]string {
	l := maps.Clone(e.o.labels)
	if l == nil {
		l = map[string]string{}
	}
	l[TermIDLabel] = termID
	if e.o.group != "" {
		l[TermGroupLabel] = TermGroupLabelValue(e.namespace, e.o.group)
	}
	return l
}

// stampLease is the TermLeaseLabel value of the Elector's creates: its
// Lease's, or its term group's (WithTermGroup), by which a binding
// selects them.
func (e *Elector) stampLease() string {
	if e.o.group != "" {
		return TermGroupLabelValue(e.namespace, e.o.group)
	}
	return TermLeaseLabelValue(e.namespace, e.name)
}

// holdingTerm returns holdingUntil and the ID of the term whose renewal
// it counts from ("" when not holding).
func (e *Elector) holdingTerm() (until time.Time, termID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.validUntil.IsZero() || !time.Now().Before(e.validUntil) || e.termID == "" {
		return time.Time{}, ""
	}
	return e.validUntil, e.termID
}

// createOnlyVersion is the resourceVersion of an apply that only creates
// (pkg/apply's createOnly: no object has it, so the apply fails with a
// conflict if the object exists, and creates it otherwise).
const createOnlyVersion = "18446744073709551615"

// How the fence stamps a write (stampKind).
type stampKind int

const (
	noStamp      stampKind = iota // the write goes as it is
	createStamp                   // stamped, sent by create (with its retries)
	restampInner                  // stamped in place, sent as a handled object's write
)

// stampOf says how the write req of t is stamped, and returns the
// request to send on: req, or a copy whose body it read. A POST to a
// collection is a create. A PUT or an apply patch may create (the API
// server judges it as a create then): one that only creates
// (createOnlyVersion, an apply), or that carries a stamp already (copied
// from another object, stale once that object's term is over), is
// stamped with the current term, in place of what it carries; as a
// create when no pass of the term handles the object, in place when one
// does (its write keeps the passes' checks of RoundTrip). Other writes,
// which never create, are not judged by the policy and go as they are.
// One whose body it cannot read fails (ErrUnstampable): it may create.
func (f *fence) stampOf(req *http.Request, t target) (stampKind, *http.Request, error) {
	if req.Method == http.MethodPost {
		if t.obj.Name == "" && t.obj.Resource != "" {
			return createStamp, req, nil
		}
		return noStamp, req, nil
	}
	ct := req.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(ct)
	apply := req.Method == http.MethodPatch && strings.HasPrefix(mediaType, "application/apply-patch+")
	if !apply && req.Method != http.MethodPut || t.obj.Name == "" || t.sub != "" || req.Body == nil || req.Body == http.NoBody {
		return noStamp, req, nil
	}
	body, err := readBody(req)
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err != nil {
		return noStamp, r, nil // the request fails on its own body's error
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	stamped, createOnly, versioned, err := carriesStamp(mediaFormat(mediaType), body)
	if err != nil {
		return noStamp, nil, fmt.Errorf("%w: %s %s with a body of Content-Type %q, which may create: %v", ErrUnstampable, req.Method, req.URL, ct, err)
	}
	_, handled, _ := f.e.passes.expected(t.obj)
	switch {
	case req.Method == http.MethodPut && versioned:
		// An update: it creates nothing, and its labels are the
		// object's own (another operator's stamp included), left as
		// they are.
		return noStamp, r, nil
	case (stamped || apply && createOnly) && handled:
		// A create of a handled object (a handler given it deleted
		// recreates it): its own resourceVersion leaves it no
		// precondition, so the stamp is its only fence.
		return restampInner, r, nil
	case stamped || apply && createOnly:
		return createStamp, r, nil
	}
	return noStamp, r, nil
}

// readBody reads and closes req's body, in one allocation when its
// length is known (every update goes through here).
func readBody(req *http.Request) ([]byte, error) {
	defer func() { _ = req.Body.Close() }()
	if req.ContentLength <= 0 || req.ContentLength > 1<<30 {
		return io.ReadAll(req.Body)
	}
	buf := bytes.NewBuffer(make([]byte, 0, req.ContentLength+bytes.MinRead))
	_, err := buf.ReadFrom(req.Body)
	return buf.Bytes(), err
}

// errReader fails every read with err (io.EOF when err is nil).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// create sends a create (a POST to a collection, or a PUT or an apply
// that may create, see stampOf) through the fence, stamped with the term
// it is issued in, bound to that term's renew deadline like every write.
func (f *fence) create(req *http.Request) (*http.Response, error) {
	until, termID := f.e.holdingTerm()
	if until.IsZero() {
		return nil, f.notLeader(req, false)
	}
	ctx, cancel := context.WithDeadline(req.Context(), until)
	r, err := f.stamped(req.WithContext(ctx), termID)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := f.sendCreate(r, termID)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// stamped returns req with its body stamped with the term termID, sent as
// the user the fence learns, and bound to be sent as that user's sender
// (termsender.go; closing req's body on an error).
func (f *fence) stamped(req *http.Request, termID string) (*http.Request, error) {
	user, key, err := f.user(req, termID)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	st := stamp{id: termID, lease: f.e.stampLease()}
	st.user, _ = TermUserLabelValue(user)
	return stampBody(sentAs(req, key), st)
}

// sendCreate sends the stamped create r. The API server judges its stamp
// by its own informer's copy of the Lease, which may not show this term
// yet (just after an acquisition, or the Lease's creation): while this
// replica still holds the term stamped (a renewal of it succeeded, so the
// Lease is in it), a refusal by the term policy is that lag, the create
// was not made, and it is sent again, backing off, until the term's
// deadline ends r's context.
func (f *fence) sendCreate(r *http.Request, termID string) (*http.Response, error) {
	backoff := 20 * time.Millisecond
	for {
		resp, err := f.next.RoundTrip(r)
		if err != nil || resp.StatusCode < 400 || r.GetBody == nil {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte("ValidatingAdmissionPolicy '"+TermPolicyName+"'")) {
			return resp, nil
		}
		if _, now := f.e.holdingTerm(); now != termID {
			return resp, nil // the term is over: the refusal stands
		}
		t := time.NewTimer(backoff)
		select {
		case <-r.Context().Done():
			t.Stop()
			return resp, nil
		case <-t.C:
		}
		backoff = min(2*backoff, 500*time.Millisecond)
		b, err := r.GetBody()
		if err != nil {
			return resp, nil
		}
		r = r.Clone(r.Context())
		r.Body = b
	}
}
