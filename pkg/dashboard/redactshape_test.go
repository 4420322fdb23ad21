package dashboard_test

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// holder is a value of the operator's own that carries a Secret in a field.
type holder struct {
	Name   string
	Inner  any
	Linked *holder
}

// TestRedactFindsSecretsInAnyShape: a Secret is reduced wherever a value
// holds it (a map, an interface field, a linked value, a list whose items
// name no kind), and what is not a Secret is still shown.
func TestRedactFindsSecretsInAnyShape(t *testing.T) {
	const password = "Hunter2-any-shape"
	encoded := base64.StdEncoding.EncodeToString([]byte(password))
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"},
		Data: map[string][]byte{"password": []byte(password)}}
	u := unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "SecretList"}}
	u.Items = []unstructured.Unstructured{{Object: map[string]any{
		"metadata": map[string]any{"name": "db"}, "data": map[string]any{"password": encoded}}}}
	values := map[string]any{
		"held/map":       map[string]any{"s": &secret},
		"held/typedmap":  map[string]corev1.Secret{"s": secret},
		"held/field":     holder{Name: "visible-name", Inner: &secret},
		"held/linked":    &holder{Name: "visible-name", Linked: &holder{Inner: []any{secret}}},
		"held/nokinds":   &u,
		"held/mapofjson": map[string]any{"x": map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"}, "data": map[string]any{"p": encoded}}},
	}
	srv := serveValues(t, values)
	for key, body := range checkValuesHide(t, srv, values, password, encoded) {
		if !strings.Contains(body, `"db"`) {
			t.Errorf("GET /ui/api/value?key=%s does not show the Secret's name: %s", key, body[:min(len(body), 500)])
		}
	}
	if body := get(t, srv.URL+"/ui/api/value?key=held/field", nil); !strings.Contains(body, "visible-name") {
		t.Errorf("the holder's own field is hidden: %s", body)
	}
}
