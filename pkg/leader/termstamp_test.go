package leader

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// TestCreateBodiesAreStamped: a JSON and a protobuf create body get the
// stamp's labels beside the object's own labels and annotations (a stamp
// already there is replaced, the annotations of the earlier versions'
// stamp are removed), with everything else as it was, numbers beyond
// float64's precision included; a body in another encoding goes as it is.
func TestCreateBodiesAreStamped(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"mine": "kept", TermIDLabel: "forged", TermUserLabel: "other"},
			Annotations: map[string]string{TermAnnotation: "forged", TermUserAnnotation: "other", "note": "kept"}},
		Data: map[string]string{"k": "v"},
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(cm, &pb); err != nil {
		t.Fatal(err)
	}
	post := func(contentType string, body []byte, st stamp) []byte {
		req, _ := http.NewRequest(http.MethodPost, "https://h/api/v1/namespaces/n/configmaps", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		r, err := stampBody(req, st)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(r.Body)
		if r.ContentLength != int64(len(out)) {
			t.Errorf("%s: ContentLength %d for %d bytes", contentType, r.ContentLength, len(out))
		}
		return out
	}
	decode := func(b []byte) *corev1.ConfigMap {
		obj, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(b, nil, nil)
		if err != nil {
			t.Fatalf("the stamped protobuf body does not decode: %v", err)
		}
		return obj.(*corev1.ConfigMap)
	}
	st := stamp{id: "t1", user: "op", lease: "lease"}
	got := decode(post("application/vnd.kubernetes.protobuf", pb.Bytes(), st))
	wantLabels := map[string]string{"mine": "kept", TermIDLabel: "t1", TermUserLabel: "op", TermLeaseLabel: "lease"}
	if !maps.Equal(got.Labels, wantLabels) || !maps.Equal(got.Annotations, map[string]string{"note": "kept"}) ||
		got.Data["k"] != "v" || got.Name != "x" {
		t.Errorf("protobuf: stamped to %+v", got.ObjectMeta)
	}
	// A sender with no label value: the user label copied along goes.
	got = decode(post("application/vnd.kubernetes.protobuf", pb.Bytes(), stamp{id: "t1", lease: "lease"}))
	if _, ok := got.Labels[TermUserLabel]; ok || got.Labels[TermIDLabel] != "t1" {
		t.Errorf("protobuf, no user: labels %v", got.Labels)
	}

	b := string(post("application/json", []byte(`{"kind":"X","metadata":{"name":"x","labels":{"mine":"kept","lariat.dev/term-user":"other"},`+
		`"annotations":{"lariat.dev/term":"forged","note":"kept"}},"spec":{"big":9007199254740993}}`), st))
	for _, want := range []string{`"big":9007199254740993`, `"lariat.dev/term-id":"t1"`, `"lariat.dev/term-lease":"lease"`,
		`"lariat.dev/term-user":"op"`, `"mine":"kept"`, `"annotations":{"note":"kept"}`} {
		if !strings.Contains(b, want) {
			t.Errorf("JSON: %s lacks %s", b, want)
		}
	}
	if b := string(post("application/json", []byte(`{"metadata":{"labels":{"lariat.dev/term-user":"other"}}}`), stamp{id: "t1", lease: "lease"})); strings.Contains(b, "other") {
		t.Errorf("JSON, no user: %s", b)
	}

	// YAML is decoded as the API server decodes it, and sent as JSON
	// (which is YAML) under its own Content-Type.
	for _, ct := range []string{"application/yaml", "application/apply-patch+yaml"} {
		b := string(post(ct, []byte("kind: X\nmetadata:\n  labels:\n    mine: kept\n    lariat.dev/term-id: old\nspec:\n  big: 9007199254740993\n"), st))
		want := `{"kind":"X","metadata":{"labels":{"lariat.dev/term-id":"t1","lariat.dev/term-lease":"lease","lariat.dev/term-user":"op","mine":"kept"}},"spec":{"big":9007199254740993}}`
		if b != want {
			t.Errorf("%s: stamped to %s, want %s", ct, b, want)
		}
	}
}

// TestUnreadableCreateBodiesFailUnsent: a create whose body the fence
// cannot read (an encoding it does not know, or a body that does not
// decode as its Content-Type says) fails with ErrUnstampable, and is not
// sent: unstamped, the term policy would never judge it.
func TestUnreadableCreateBodiesFailUnsent(t *testing.T) {
	e := holdingElector(t, "t1")
	for ct, body := range map[string]string{
		"application/cbor":                    "\xd9\xd9\xf7\xa1\x64kind\x61X",
		"application/json":                    `{"kind":`,
		"application/yaml":                    "kind: [X\n",
		"application/vnd.kubernetes.protobuf": `{"kind":"ConfigMap"}`,
		"text/plain":                          `{"kind":"ConfigMap"}`,
	} {
		stub := &stubTransport{answers: []stubAnswer{{201, `{}`}}}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://h/api/v1/namespaces/n/configmaps", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		resp, err := (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(req)
		if !errors.Is(err, ErrUnstampable) {
			t.Errorf("%s create: %v, %v; want ErrUnstampable", ct, resp, err)
		}
		if len(stub.sent) != 0 {
			t.Errorf("%s create: sent %q, want nothing sent", ct, stub.sent)
		}
	}
}

// TestTermUserLabelValue: a username becomes a label value the term
// policy computes alike (':' to '.', '@' to '_', a long one shortened to
// its ends); one outside ASCII, or not a label value then, has none.
func TestTermUserLabelValue(t *testing.T) {
	long := "system:serviceaccount:" + strings.Repeat("n", 40) + ":" + strings.Repeat("s", 40)
	for user, want := range map[string]string{
		"system:serviceaccount:ns:op": "system.serviceaccount.ns.op",
		"alice@example.com":           "alice_example.com",
		long:                          "system.serviceaccount.nnnnnnnnn-" + strings.Repeat("s", 31),
		"café":                        "",
		"https://issuer#sub":          "",
		":starts-with-a-colon":        "",
		"":                            "",
	} {
		got, ok := TermUserLabelValue(user)
		if got != want || ok != (want != "") {
			t.Errorf("TermUserLabelValue(%q) = %q, %v; want %q", user, got, ok, want)
		}
		if ok && len(validation.IsValidLabelValue(got)) > 0 {
			t.Errorf("TermUserLabelValue(%q) = %q, not a label value", user, got)
		}
	}
}

// TestTermLeaseLabelValueIsALabelValue: a Lease name too long for a label
// value is hashed, and the hash tells namespaces apart.
func TestTermLeaseLabelValueIsALabelValue(t *testing.T) {
	long := strings.Repeat("a", 64)
	if v := TermLeaseLabelValue("ns", "short"); v != "ns.short" {
		t.Errorf("short name: %q", v)
	}
	v1, v2 := TermLeaseLabelValue("ns1", long), TermLeaseLabelValue("ns2", long)
	if len(v1) > 63 || v1 == v2 || !strings.HasPrefix(v1, "h-") {
		t.Errorf("long name: %q and %q", v1, v2)
	}
}

// stubTransport answers each request with the next of its answers (status
// and body), and records the bodies it was sent. A SelfSubjectReview is
// answered apart (user "op", or reviewStatus when set), and recorded in
// reviews.
type stubTransport struct {
	answers      []stubAnswer
	sent         []string
	reviews      []*http.Request
	reviewStatus int
}

type stubAnswer struct {
	status int
	body   string
}

func (s *stubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/apis/authentication.k8s.io/v1/selfsubjectreviews") {
		s.reviews = append(s.reviews, req)
		status, body := http.StatusCreated, `{"kind":"SelfSubjectReview","status":{"userInfo":{"username":"op"}}}`
		if s.reviewStatus != 0 {
			status, body = s.reviewStatus, `{"kind":"Status","message":"no"}`
		}
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}, Request: req}, nil
	}
	b, _ := io.ReadAll(req.Body)
	s.sent = append(s.sent, string(b))
	a := s.answers[0]
	if len(s.answers) > 1 {
		s.answers = s.answers[1:]
	}
	return &http.Response{StatusCode: a.status, Body: io.NopCloser(strings.NewReader(a.body)), Header: http.Header{}, Request: req}, nil
}

// holdingElector is an Elector that holds its term termID for a while,
// without a Lease: for tests of the fence alone.
func holdingElector(t *testing.T, termID string) *Elector {
	t.Helper()
	e := &Elector{namespace: "ns", name: "lease", o: options{identity: "a"}, passes: &passTable{}}
	e.renewedFor(termID, time.Minute)
	return e
}

// renewedFor makes e hold the term termID for d, as a renewal would.
func (e *Elector) renewedFor(termID string, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.validUntil, e.termID = time.Now().Add(d), termID
}

const refusal = `{"kind":"Status","message":"configmaps \"x\" is forbidden: ValidatingAdmissionPolicy 'term-fence.lariat.dev' with binding 'b' denied request: ..."}`

func postCM(t *testing.T) *http.Request {
	t.Helper()
	body := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://h/api/v1/namespaces/n/configmaps", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestCreateRefusedForALaggingLeaseViewIsSentAgain: while the replica
// still holds the term it stamped, a refusal by the term policy is the API
// server's Lease view lagging: the create is sent again, stamped alike,
// until it is admitted. Once the term changed, the refusal stands, and a
// refusal by anything else is returned at once.
func TestCreateRefusedForALaggingLeaseViewIsSentAgain(t *testing.T) {
	e := holdingElector(t, "t1")
	stub := &stubTransport{answers: []stubAnswer{{403, refusal}, {422, refusal}, {201, `{}`}}}
	resp, err := (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v, %v; want 201 after two refusals", resp, err)
	}
	_ = resp.Body.Close()
	if len(stub.sent) != 3 {
		t.Fatalf("sent %d times, want 3", len(stub.sent))
	}
	for i, b := range stub.sent {
		if !strings.Contains(b, `"lariat.dev/term-id":"t1"`) || !strings.Contains(b, `"lariat.dev/term-lease":"ns.lease"`) {
			t.Errorf("attempt %d not stamped with term t1: %s", i, b)
		}
	}

	stub = &stubTransport{answers: []stubAnswer{{403, refusal}, {201, `{}`}}}
	next := &fence{e: e, next: senderCheck{next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		e.renewedFor("t2", time.Minute) // the term changed meanwhile
		return stub.RoundTrip(r)
	})}}
	resp, err = next.RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 403 || len(stub.sent) != 1 {
		t.Fatalf("a refusal after the term changed: %v, %v, sent %d times; want the 403, sent once", resp, err, len(stub.sent))
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != refusal {
		t.Errorf("the refusal's body reads %q", b)
	}

	stub = &stubTransport{answers: []stubAnswer{{403, `{"kind":"Status","message":"forbidden by RBAC"}`}, {201, `{}`}}}
	resp, err = (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 403 || len(stub.sent) != 1 {
		t.Fatalf("another refusal: %v, %v, sent %d times; want the 403, sent once", resp, err, len(stub.sent))
	}

	e.renewedFor("", -time.Second)
	if _, err := (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(postCM(t)); err == nil {
		t.Error("a create while not holding went out")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCreateOnlyApplyIsStamped: an apply patch that only creates (the
// resourceVersion no object has) is stamped, also of an object a pass of
// the term is handling (its own resourceVersion leaves it no
// precondition: the stamp is its only fence), and that one too is sent
// again while the API server's view of the Lease lags the term; an apply
// of an existing object's version is not stamped.
func TestCreateOnlyApplyIsStamped(t *testing.T) {
	e := holdingElector(t, "t1")
	send := func(name, rv string, answers ...stubAnswer) []string {
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","resourceVersion":"` + rv + `"}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPatch, "https://h/api/v1/namespaces/n/configmaps/"+name, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		stub := &stubTransport{answers: append(answers, stubAnswer{200, `{}`})}
		resp, err := (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return stub.sent
	}
	if b := send("new", createOnlyVersion)[0]; !strings.Contains(b, `"lariat.dev/term-id":"t1"`) {
		t.Errorf("a create-only apply went unstamped: %s", b)
	}
	if b := send("old", "42")[0]; strings.Contains(b, "lariat.dev/term") {
		t.Errorf("an apply of an existing object was stamped: %s", b)
	}
	e.passes.beginTerm()
	done := e.passes.Handling(controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "handled"}, "7")
	defer done()
	sent := send("handled", createOnlyVersion, stubAnswer{403, refusal})
	if len(sent) != 2 {
		t.Fatalf("a create-only apply of a handled object refused for the Lease view's lag was sent %d times, want 2", len(sent))
	}
	for _, b := range sent {
		if !strings.Contains(b, `"lariat.dev/term-id":"t1"`) || !strings.Contains(b, `"resourceVersion":"`+createOnlyVersion+`"`) {
			t.Errorf("a create-only apply of a handled object went as %s, want stamped with t1 and its own version", b)
		}
	}
}

// TestWritesThatMayCreateAreRestamped: a PUT or an apply carrying a stamp
// (copied from another object) may create, and goes with the current
// term's stamp in its place, a handled object's with its precondition
// too; one carrying none, a merge patch (which never creates), and a
// subresource's PUT go as they are.
func TestWritesThatMayCreateAreRestamped(t *testing.T) {
	e := holdingElector(t, "t1")
	e.passes.beginTerm()
	done := e.passes.Handling(controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "handled"}, "7")
	defer done()
	const copied = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"lariat.dev/term-lease":"ns.lease","lariat.dev/term-id":"t0"}}}`
	send := func(method, contentType, path, body string) string {
		req, _ := http.NewRequestWithContext(t.Context(), method, "https://h/api/v1/namespaces/n/configmaps/"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		stub := &stubTransport{answers: []stubAnswer{{200, `{}`}}}
		resp, err := (&fence{e: e, next: senderCheck{next: stub}}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return stub.sent[0]
	}
	for _, c := range []struct{ method, contentType, path string }{
		{http.MethodPut, "application/json", "x"},
		{http.MethodPatch, "application/apply-patch+yaml", "x"},
		{http.MethodPut, "application/json", "handled"},
		{http.MethodPatch, "application/apply-patch+yaml", "handled"},
	} {
		b := send(c.method, c.contentType, c.path, copied)
		if !strings.Contains(b, `"lariat.dev/term-id":"t1"`) || !strings.Contains(b, `"lariat.dev/term-user":"op"`) {
			t.Errorf("%s %s of %s carrying a stamp went %s, want the current term's stamp", c.method, c.contentType, c.path, b)
		}
		if c.path == "handled" && !strings.Contains(b, `"resourceVersion":"7"`) {
			t.Errorf("%s of a handled object lost its precondition: %s", c.method, b)
		}
	}
	unstamped := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"b"}}}`
	if b := send(http.MethodPut, "application/json", "x", unstamped); b != unstamped {
		t.Errorf("a PUT carrying no stamp went %s", b)
	}
	if b := send(http.MethodPatch, "application/merge-patch+json", "x", copied); b != copied {
		t.Errorf("a merge patch went %s", b)
	}
	if b := send(http.MethodPut, "application/json", "x/status", copied); b != copied {
		t.Errorf("a status PUT went %s", b)
	}
}
