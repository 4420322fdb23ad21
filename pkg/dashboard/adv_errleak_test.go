package dashboard_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdvAMarkedKindsFieldsAreNotQuotedByItsErrors: the user marks a kind
// (Options.RedactKinds) so that only its name, namespace and labels are
// shown, and the safety table promises no view shows more. The value's
// detail is reduced, but a failed create of such an object is shown with
// its error as written, and the API server's validation errors quote the
// rejected value (for a CRD's OpenAPI schema: `spec.password: Invalid
// value: "..."`). So the very field the user hid is on the graph, the
// value's detail and timeline, the transactions feed and the stream.
// docs/dashboard.md "Not done yet" admits errors are shown as written; the
// safety row (docs/safety.md) does not.
func TestAdvAMarkedKindsFieldsAreNotQuotedByItsErrors(t *testing.T) {
	const password = "Hunter2-s3cr3t"
	creds := schema.GroupKind{Group: "example.com", Kind: "Credentials"}
	key := kubedescriptor.KeyPrefix(creds) + "prod/db"
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	s, err := kvscheduler.New(kvscheduler.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	if err := s.RegisterDescriptor(t.Context(), sb.Descriptor("credentials", kubedescriptor.KeyPrefix(creds))); err != nil {
		t.Fatal(err)
	}
	// As the API server answers an object its CRD's schema rejects.
	sb.FailNext("create", key, errors.New(`Credentials.example.com "db" is invalid: spec.password: Invalid value: "`+password+
		`": spec.password in body should match '^[a-z0-9]+$'`))
	obj := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Credentials",
		"metadata": map[string]any{"name": "db", "namespace": "prod"},
		"spec":     map[string]any{"user": "app", "password": password},
	}
	_, _ = s.StartNBTransaction().SetValue(key, obj).Commit(t.Context())

	d, err := dashboard.New(dashboard.Options{Scheduler: s, RedactKinds: []schema.GroupKind{creds}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	value := get(t, srv.URL+"/ui/api/value?key="+key, nil)
	if !strings.Contains(value, "only the name, namespace and labels") {
		t.Fatalf("the object is not redacted at all: %s", value)
	}
	for _, path := range []string{"/ui/api/graph", "/ui/api/value?key=" + key, "/ui/api/txns"} {
		if body := get(t, srv.URL+path, nil); strings.Contains(body, password) {
			t.Errorf("GET %s shows the marked kind's password: %s", path, body[:min(len(body), 400)])
		}
	}
}
