package dashboard_test

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv2Scheduler is a scheduler with one kvtest descriptor per prefix.
func adv2Scheduler(t *testing.T, prefixes ...string) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	s, err := kvscheduler.New(kvscheduler.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	for i, p := range prefixes {
		if err := s.RegisterDescriptor(t.Context(), sb.Descriptor("d"+itoa(uint64(i)), p)); err != nil {
			t.Fatal(err)
		}
	}
	return s, sb
}

// TestAdv2SecretListsAreNotShownWithTheirData: the safety row promises "a
// Secret (by Go type, apiVersion/kind or key) is shown by name, namespace,
// labels and UID only", and redact handles *corev1.SecretList for that
// reason. But a value that holds Secrets as a list in another form is
// shown whole: a corev1.SecretList (not a pointer), a []corev1.Secret, and
// the list a dynamic client returns (an UnstructuredList, apiVersion v1,
// kind SecretList): redact only reduces a JSON object whose kind is exactly
// "Secret", and returns anything that is not an object (a JSON array) as
// it is. The Secrets' data (base64) and stringData are on /ui/api/value.
func TestAdv2SecretListsAreNotShownWithTheirData(t *testing.T) {
	const password = "Hunter2-s3cr3t-list"
	encoded := base64.StdEncoding.EncodeToString([]byte(password))
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"},
		Data: map[string][]byte{"password": []byte(password)}, StringData: map[string]string{"also": password}}
	u := unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "SecretList"}}
	u.Items = []unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "prod"}, "data": map[string]any{"password": encoded}}}}
	values := map[string]any{
		"held/secretlist":     corev1.SecretList{Items: []corev1.Secret{secret}},
		"held/secretslice":    []corev1.Secret{secret},
		"held/unstructured":   &u,
		"held/secretpointers": []*corev1.Secret{&secret},
	}
	s, _ := adv2Scheduler(t, "held/")
	for key, v := range values {
		if _, err := s.StartNBTransaction().SetValue(key, v).Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	d, err := dashboard.New(dashboard.Options{Scheduler: s})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	for key := range values {
		body := get(t, srv.URL+"/ui/api/value?key="+key, nil)
		if strings.Contains(body, password) || strings.Contains(body, encoded) {
			t.Errorf("GET /ui/api/value?key=%s shows the Secret's data: %s", key, body[:min(len(body), 500)])
		}
	}
}

// TestAdv2ASecretsFieldValueOnASecondLineIsShown: the errors of a Secret
// are shown "without their quoted strings and field-error values
// (`Invalid value: <redacted>`)". scrub finds an unquoted field-error value
// up to the next ": " or the end of the whole text ($ without (?m)): a
// value at the end of a line of a multi-line error (errors.Join of
// field errors without detail, as a Validate returns) is left as it is.
func TestAdv2ASecretsFieldValueOnASecondLineIsShown(t *testing.T) {
	const pin = "918273645"
	key := kubedescriptor.KeyPrefix(schema.GroupKind{Kind: "Secret"}) + "prod/db"
	s, sb := adv2Scheduler(t, kubedescriptor.KeyPrefix(schema.GroupKind{Kind: "Secret"}))
	fe := field.Invalid(field.NewPath("data").Key("pin"), 918273645, "")
	sb.FailNext("create", key, errors.Join(fe, field.Required(field.NewPath("data").Key("user"), "")))
	obj := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"}, StringData: map[string]string{"pin": pin}}
	_, _ = s.StartNBTransaction().SetValue(key, obj).Commit(t.Context())
	d, err := dashboard.New(dashboard.Options{Scheduler: s})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	if body := get(t, srv.URL+"/ui/api/txns", nil); !strings.Contains(body, "data[user]") {
		t.Fatalf("the create's error is not in the transactions at all: %s", body)
	}
	for _, path := range []string{"/ui/api/graph", "/ui/api/value?key=" + key, "/ui/api/txns"} {
		if body := get(t, srv.URL+path, nil); strings.Contains(body, pin) {
			t.Errorf("GET %s shows the Secret's field value: %s", path, body[:min(len(body), 600)])
		}
	}
}
