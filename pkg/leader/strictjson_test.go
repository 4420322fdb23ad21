package leader

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

// TestDuplicateKeyIsFoundAtAnyDepth: a key written twice in any object of
// a JSON body is found; equal keys in different objects, and bodies that
// are not JSON, are not.
func TestDuplicateKeyIsFoundAtAnyDepth(t *testing.T) {
	for body, dup := range map[string]bool{
		`{"metadata":{},"metadata":{}}`:                   true,
		`{"metadata":{"labels":{"a":"1"},"labels":{}}}`:   true,
		`{"data":{"x":[{"k":1,"k":2}]}}`:                  true,
		`{"metadata":{"name":"a"},"spec":{"name":"a"}}`:   false,
		`{"metadata":{"labels":{"a":"1","A":"2"}}}`:       false,
		"metadata:\n  name: a\n":                          false,
		`{"metadata":{"labels":{"a":"1"}}, "n": 1e400}`:   false,
		`{"metadata":{"labels":{"a":"1","a":"2"}},"n":1}`: true,
	} {
		if err := duplicateKey([]byte(body)); (err != nil) != dup {
			t.Errorf("duplicateKey(%s) = %v; want a duplicate: %v", body, err, dup)
		}
	}
}

// TestPreconditionIsNotAddedToABodyWithADuplicateKey: a handled object's
// update that the fence would encode back with its precondition, and
// whose JSON writes "metadata" twice (the API server merges the two, the
// fence's maps keep the last), fails unsent with ErrUnstampable; one the
// fence leaves as it is goes.
func TestPreconditionIsNotAddedToABodyWithADuplicateKey(t *testing.T) {
	put := func(body string) *http.Request {
		req, err := http.NewRequest(http.MethodPut, "https://h/api/v1/namespaces/n/configmaps/x", io.NopCloser(bytes.NewReader([]byte(body))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	_, err := withPrecondition(put(`{"metadata":{"resourceVersion":"5"},"metadata":{"name":"x"}}`), "7", "")
	if !errors.Is(err, ErrUnstampable) {
		t.Errorf("an update with \"metadata\" twice, the last without a resourceVersion: %v; want ErrUnstampable", err)
	}
	r, err := withPrecondition(put(`{"metadata":{"name":"x"},"metadata":{"resourceVersion":"5"}}`), "7", "")
	if err != nil {
		t.Fatalf("an update with \"metadata\" twice, the last with its resourceVersion (left as it is): %v", err)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != `{"metadata":{"name":"x"},"metadata":{"resourceVersion":"5"}}` {
		t.Errorf("the update left as it is was sent as %s", b)
	}
}
