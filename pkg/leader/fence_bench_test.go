package leader

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkFencePutOfAnUnstampedObject: the fence's cost on an update
// (PUT) of a 64 KiB ConfigMap that carries no stamp, through a transport
// that answers at once.
func BenchmarkFencePutOfAnUnstampedObject(b *testing.B) {
	benchmarkFencePut(b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"5","labels":{"a":"b"}},"data":{"k":"`+
		strings.Repeat("x", 64<<10)+`"}}`)
}

// BenchmarkFencePutWithEscapes: as BenchmarkFencePutOfAnUnstampedObject,
// with a \u escape in the data (Go's encoding/json writes '<', '>' and '&'
// so): the fence decodes such a body to look for a stamp whose keys are
// escaped.
func BenchmarkFencePutWithEscapes(b *testing.B) {
	benchmarkFencePut(b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"5","labels":{"a":"b"}},"data":{"k":"\u003c`+
		strings.Repeat("x", 64<<10)+`"}}`)
}

// BenchmarkFencePutOfACopiedStamp: a PUT that may create (no
// resourceVersion) of a 64 KiB ConfigMap carrying a copied stamp, which
// the fence decodes, stamps with its term and encodes again.
func BenchmarkFencePutOfACopiedStamp(b *testing.B) {
	benchmarkFencePut(b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"lariat.dev/term-lease":"ns.lease","lariat.dev/term-id":"t0"}},"data":{"k":"`+
		strings.Repeat("x", 64<<10)+`"}}`)
}

// benchmarkFencePut sends PUTs of body through a fence of a held term, to
// a transport that answers at once (a SelfSubjectReview with user "op").
func benchmarkFencePut(b *testing.B, body string) {
	e := &Elector{namespace: "ns", name: "lease", o: options{identity: "a"}, passes: &passTable{}}
	e.mu.Lock()
	e.validUntil, e.termID = time.Now().Add(time.Hour), "t1"
	e.mu.Unlock()
	f := &fence{e: e, next: senderCheck{next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		answer := "{}"
		if strings.HasSuffix(r.URL.Path, "/selfsubjectreviews") {
			answer = `{"kind":"SelfSubjectReview","status":{"userInfo":{"username":"op"}}}`
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(answer)), Header: http.Header{}}, nil
	})}}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPut, "https://h/api/v1/namespaces/n/configmaps/x", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}
