package dashboard_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

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
	srv := serveValues(t, values)
	checkValuesHide(t, srv, values, password, encoded)
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
	srv := serveDashboard(t, dashboard.Options{Scheduler: s})
	if body := get(t, srv.URL+"/ui/api/txns", nil); !strings.Contains(body, "data[user]") {
		t.Fatalf("the create's error is not in the transactions at all: %s", body)
	}
	checkViewsHide(t, srv, key, pin, "the Secret's field value")
}
