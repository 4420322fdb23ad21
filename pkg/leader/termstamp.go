package leader

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Term tokens: a create is the one write a resourceVersion precondition
// cannot fence (the API server checks nothing on a create but "does not
// exist yet"), so a create sent inside a term over a connection that
// stalled could land after another replica decided the object should not
// exist. Every term writes a token of its own into its Lease (the label
// TermIDLabel, with each acquisition and renewal), and every create sent
// through Fence's config carries the term it was issued in (TermAnnotation,
// and TermLeaseLabel to select it). The ValidatingAdmissionPolicy of
// InstallTermPolicy, whose parameter is the Lease, refuses a create whose
// stamp names the Lease but not its current term (termpolicy.go).

const (
	// TermAnnotation is stamped on every object created through Fence's
	// config: "<lease namespace>/<lease name>/<holder identity>/<term ID>",
	// the term the create was sent in.
	TermAnnotation = "lariat.dev/term"
	// TermLeaseLabel is stamped beside TermAnnotation: it names the Lease
	// (TermLeaseLabelValue), so that the Lease's policy binding selects the
	// creates stamped with its terms, and no other object.
	TermLeaseLabel = "lariat.dev/term-lease"
	// TermIDLabel is the label on the Lease naming its current term: each
	// term of an Elector draws an ID of its own and writes it with every
	// acquisition and renewal, so that a term that ended and the next term
	// of the same holder are told apart.
	TermIDLabel = "lariat.dev/term-id"
	// TermUserAnnotation is stamped beside TermAnnotation: the username
	// the fenced config sends the create as (asked of the API server, see
	// termuser.go). The term policy judges a stamped create only when it
	// is sent by that user, so a copy or restore of the object by another
	// identity (a user's kubectl, a backup tool) is never refused.
	TermUserAnnotation = "lariat.dev/term-user"
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
	return l
}

// termToken is the TermAnnotation of creates sent in the term termID.
func (e *Elector) termToken(termID string) string {
	return e.namespace + "/" + e.name + "/" + e.o.identity + "/" + termID
}

// holdingTerm returns holdingUntil and the token of the term whose renewal
// it counts from ("" when not holding).
func (e *Elector) holdingTerm() (until time.Time, token string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.validUntil.IsZero() || !time.Now().Before(e.validUntil) || e.termID == "" {
		return time.Time{}, ""
	}
	return e.validUntil, e.termToken(e.termID)
}

// createOnlyVersion is the resourceVersion of an apply that only creates
// (pkg/apply's createOnly: no object has it, so the apply fails with a
// conflict if the object exists, and creates it otherwise).
const createOnlyVersion = "18446744073709551615"

// isCreate reports whether req creates an object: a POST to a collection,
// or an apply patch of an object no pass of the term is handling (a
// handled object's writes keep the passes' checks of RoundTrip) that only
// creates (createOnlyVersion) or that carries a term stamp already (which
// the current term's replaces). It returns the request to send on: req,
// or a copy whose body it read.
func (f *fence) isCreate(req *http.Request, t target) (bool, *http.Request) {
	if req.Method == http.MethodPost {
		return t.obj.Name == "" && t.obj.Resource != "", req
	}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if req.Method != http.MethodPatch || mediaType != "application/apply-patch+yaml" || t.obj.Name == "" ||
		req.Body == nil || req.Body == http.NoBody {
		return false, req
	}
	if _, handled, _ := f.e.passes.expected(t.obj); handled {
		return false, req
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err != nil {
		return false, r // the request fails on its own body's error
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	var obj struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return false, r
	}
	md := obj.Metadata
	_, annotated := md.Annotations[TermAnnotation]
	_, labeled := md.Labels[TermLeaseLabel]
	// An apply carrying a stamp copied from another object (a handler
	// propagating its parent's metadata to a child) would create the
	// object with that object's term, refused once that term is over,
	// in every later term too: it is stamped with the current term
	// instead, as a create.
	return md.ResourceVersion == createOnlyVersion || annotated || labeled, r
}

// errReader fails every read with err (io.EOF when err is nil).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// create sends a create (a POST to a collection, or an apply that only
// creates) through the fence,
// stamped with the term it is issued in, bound to that term's renew
// deadline like every write.
func (f *fence) create(req *http.Request) (*http.Response, error) {
	until, token := f.e.holdingTerm()
	if until.IsZero() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &NotLeaderError{Method: req.Method, URL: req.URL.String(), Identity: f.e.Identity()}
	}
	ctx, cancel := context.WithDeadline(req.Context(), until)
	user, err := f.user(req.WithContext(ctx), token)
	if err != nil {
		cancel()
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	r, err := stampCreate(req.WithContext(ctx), stamp{token: token, user: user, lease: TermLeaseLabelValue(f.e.namespace, f.e.name)})
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := f.sendCreate(r, token)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// sendCreate sends the stamped create r. The API server judges its stamp
// by its own informer's copy of the Lease, which may not show this term
// yet (just after an acquisition, or the Lease's creation): while this
// replica still holds the term stamped (a renewal of it succeeded, so the
// Lease is in it), a refusal by the term policy is that lag, the create
// was not made, and it is sent again, backing off, until the term's
// deadline ends r's context.
func (f *fence) sendCreate(r *http.Request, token string) (*http.Response, error) {
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
		if _, now := f.e.holdingTerm(); now != token {
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

// stamp is what a create is stamped with: token (TermAnnotation), user
// (TermUserAnnotation), lease (TermLeaseLabel).
type stamp struct{ token, user, lease string }

// stampCreate returns req with the object it creates stamped: the
// annotations TermAnnotation and TermUserAnnotation, the label
// TermLeaseLabel. JSON and Kubernetes protobuf bodies are stamped; others
// (CBOR, YAML) go as they are, and are not fenced by the policy.
func stampCreate(req *http.Request, st stamp) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := body
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	switch {
	case bytes.HasPrefix(body, protobufMagic):
		out = protobufStamp(body, st)
	case mediaType == "application/json" || mediaType == "" || mediaType == "application/apply-patch+yaml":
		// An apply patch in YAML that is not JSON is left as it is.
		out = jsonStamp(body, st)
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	r.ContentLength = int64(len(out))
	return r, nil
}

// jsonStamp sets the stamp in a JSON object's metadata (body unchanged if
// it is not a JSON object). Numbers are kept as written.
func jsonStamp(body []byte, st stamp) []byte {
	var obj map[string]any
	if decodeExact(body, &obj) != nil || obj == nil {
		return body
	}
	md := nested(obj, "metadata")
	for key, kvs := range map[string]map[string]string{
		"annotations": {TermAnnotation: st.token, TermUserAnnotation: st.user},
		"labels":      {TermLeaseLabel: st.lease},
	} {
		m := nested(md, key)
		for k, v := range kvs {
			m[k] = v
		}
	}
	return marshalOr(obj, body)
}

// protobufStamp sets the stamp in a Kubernetes protobuf body: a
// runtime.Unknown envelope (raw = field 2) whose object has its ObjectMeta
// as field 1 (true of every built-in kind), where labels are field 11 and
// annotations field 12, maps of string entries (key 1, value 2). The
// entries are appended to the ObjectMeta: a map entry read last wins.
func protobufStamp(body []byte, st stamp) []byte {
	env := body[len(protobufMagic):]
	raw := protoField(env, 2)
	if raw == nil {
		return body
	}
	meta := protoField(raw, 1)
	meta = appendMapEntry(append([]byte(nil), meta...), 11, TermLeaseLabel, st.lease)
	meta = appendMapEntry(meta, 12, TermAnnotation, st.token)
	meta = appendMapEntry(meta, 12, TermUserAnnotation, st.user)
	newRaw, ok := replaceField(raw, 1, meta)
	if !ok {
		return body
	}
	newEnv, ok := replaceField(env, 2, newRaw)
	if !ok {
		return body
	}
	return append(append([]byte(nil), protobufMagic...), newEnv...)
}

// appendMapEntry appends the entry key: value of the map field num.
func appendMapEntry(b []byte, num protowire.Number, key, value string) []byte {
	var entry []byte
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, key)
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendString(entry, value)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, entry)
}

// replaceField returns message b with its length-delimited field num set
// to v: its occurrences dropped, v appended last. ok is false if b does
// not parse.
func replaceField(b []byte, num protowire.Number, v []byte) (out []byte, ok bool) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(n, typ, b[l:])
		if m < 0 {
			return nil, false
		}
		if n != num {
			out = append(out, b[:l+m]...)
		}
		b = b[l+m:]
	}
	out = protowire.AppendTag(out, num, protowire.BytesType)
	return protowire.AppendBytes(out, v), true
}
