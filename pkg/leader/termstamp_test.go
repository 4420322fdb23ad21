package leader

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// TestCreateBodiesAreStamped: a JSON and a protobuf create body get the
// term annotation and the lease label, beside the object's own labels and
// annotations (a stamp already there is replaced), with everything else
// as it was, numbers beyond float64's precision included; a body in
// another encoding goes as it is.
func TestCreateBodiesAreStamped(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"mine": "kept"},
			Annotations: map[string]string{TermAnnotation: "forged", "note": "kept"}},
		Data: map[string]string{"k": "v"},
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(cm, &pb); err != nil {
		t.Fatal(err)
	}
	post := func(contentType string, body []byte) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, "https://h/api/v1/namespaces/n/configmaps", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		r, err := stampCreate(req, stamp{token: "n/lease/a/t1", user: "op", lease: "lease"})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(r.Body)
		if r.ContentLength != int64(len(out)) {
			t.Errorf("%s: ContentLength %d for %d bytes", contentType, r.ContentLength, len(out))
		}
		return &http.Request{Body: io.NopCloser(bytes.NewReader(out)), Header: r.Header}
	}

	r := post("application/vnd.kubernetes.protobuf", pb.Bytes())
	b, _ := io.ReadAll(r.Body)
	obj, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("the stamped protobuf body does not decode: %v", err)
	}
	got := obj.(*corev1.ConfigMap)
	if got.Annotations[TermAnnotation] != "n/lease/a/t1" || got.Labels[TermLeaseLabel] != "lease" || got.Annotations[TermUserAnnotation] != "op" ||
		got.Labels["mine"] != "kept" || got.Annotations["note"] != "kept" || got.Data["k"] != "v" || got.Name != "x" {
		t.Errorf("protobuf: stamped to %+v", got.ObjectMeta)
	}

	r = post("application/json", []byte(`{"kind":"X","metadata":{"name":"x","labels":{"mine":"kept"}},"spec":{"big":9007199254740993}}`))
	b, _ = io.ReadAll(r.Body)
	for _, want := range []string{`"big":9007199254740993`, `"lariat.dev/term":"n/lease/a/t1"`, `"lariat.dev/term-lease":"lease"`, `"lariat.dev/term-user":"op"`, `"mine":"kept"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON: %s lacks %s", b, want)
		}
	}

	r = post("application/yaml", []byte("kind: X\n"))
	if b, _ = io.ReadAll(r.Body); string(b) != "kind: X\n" {
		t.Errorf("YAML body changed to %q", b)
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
	resp, err := (&fence{e: e, next: stub}).RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v, %v; want 201 after two refusals", resp, err)
	}
	_ = resp.Body.Close()
	if len(stub.sent) != 3 {
		t.Fatalf("sent %d times, want 3", len(stub.sent))
	}
	for i, b := range stub.sent {
		if !strings.Contains(b, `"lariat.dev/term":"ns/lease/a/t1"`) || !strings.Contains(b, `"lariat.dev/term-lease":"ns.lease"`) {
			t.Errorf("attempt %d not stamped with term t1: %s", i, b)
		}
	}

	stub = &stubTransport{answers: []stubAnswer{{403, refusal}, {201, `{}`}}}
	next := &fence{e: e, next: http.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		e.renewedFor("t2", time.Minute) // the term changed meanwhile
		return stub.RoundTrip(r)
	}))}
	resp, err = next.RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 403 || len(stub.sent) != 1 {
		t.Fatalf("a refusal after the term changed: %v, %v, sent %d times; want the 403, sent once", resp, err, len(stub.sent))
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != refusal {
		t.Errorf("the refusal's body reads %q", b)
	}

	stub = &stubTransport{answers: []stubAnswer{{403, `{"kind":"Status","message":"forbidden by RBAC"}`}, {201, `{}`}}}
	resp, err = (&fence{e: e, next: stub}).RoundTrip(postCM(t))
	if err != nil || resp.StatusCode != 403 || len(stub.sent) != 1 {
		t.Fatalf("another refusal: %v, %v, sent %d times; want the 403, sent once", resp, err, len(stub.sent))
	}

	e.renewedFor("", -time.Second)
	if _, err := (&fence{e: e, next: stub}).RoundTrip(postCM(t)); err == nil {
		t.Error("a create while not holding went out")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCreateOnlyApplyIsStamped: an apply patch that only creates (the
// resourceVersion no object has) goes the create path and is stamped; an
// apply of an existing object's version, and a create-only apply of an
// object a pass of the term is handling, are not.
func TestCreateOnlyApplyIsStamped(t *testing.T) {
	e := holdingElector(t, "t1")
	send := func(name, rv string) string {
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","resourceVersion":"` + rv + `"}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPatch, "https://h/api/v1/namespaces/n/configmaps/"+name, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		stub := &stubTransport{answers: []stubAnswer{{200, `{}`}}}
		resp, err := (&fence{e: e, next: stub}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return stub.sent[0]
	}
	if b := send("new", createOnlyVersion); !strings.Contains(b, `"lariat.dev/term":"ns/lease/a/t1"`) {
		t.Errorf("a create-only apply went unstamped: %s", b)
	}
	if b := send("old", "42"); strings.Contains(b, "lariat.dev/term") {
		t.Errorf("an apply of an existing object was stamped: %s", b)
	}
	e.passes.beginTerm()
	done := e.passes.Handling(controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "handled"}, "7")
	defer done()
	if b := send("handled", createOnlyVersion); strings.Contains(b, "lariat.dev/term") {
		t.Errorf("a create-only apply of a handled object was stamped: %s", b)
	}
}
