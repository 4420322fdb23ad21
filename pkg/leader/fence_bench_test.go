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
	e := &Elector{namespace: "ns", name: "lease", o: options{identity: "a"}, passes: &passTable{}}
	e.mu.Lock()
	e.validUntil, e.termID = time.Now().Add(time.Hour), "t1"
	e.mu.Unlock()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"5","labels":{"a":"b"}},"data":{"k":"` + strings.Repeat("x", 64<<10) + `"}}`
	f := &fence{e: e, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}}, nil
	})}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPut, "https://h/api/v1/namespaces/n/configmaps/x", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
	}
}
