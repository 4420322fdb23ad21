package leader

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// TestPreconditionIsAddedToEveryKindOfWrite: merge, strategic merge,
// apply and JSON patches, JSON updates and deletes get the pass's
// resourceVersion; a write with a precondition of its own keeps it.
func TestPreconditionIsAddedToEveryKindOfWrite(t *testing.T) {
	for _, c := range []struct {
		name, method, contentType, body, want string
	}{
		{"merge patch", "PATCH", "application/merge-patch+json", `{"data":{"a":"b"}}`, `{"data":{"a":"b"},"metadata":{"resourceVersion":"7"}}`},
		{"strategic merge patch", "PATCH", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"x":"y"}}}`, `{"metadata":{"labels":{"x":"y"},"resourceVersion":"7"}}`},
		{"apply patch", "PATCH", "application/apply-patch+yaml", `{"apiVersion":"v1","kind":"ConfigMap"}`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"7"}}`},
		{"JSON patch", "PATCH", "application/json-patch+json", `[{"op":"remove","path":"/metadata/finalizers/0"}]`,
			`[{"op":"remove","path":"/metadata/finalizers/0"},{"op":"replace","path":"/metadata/resourceVersion","value":"7"}]`},
		{"JSON update", "PUT", "application/json", `{"metadata":{"name":"n"}}`, `{"metadata":{"name":"n","resourceVersion":"7"}}`},
		{"delete", "DELETE", "", ``, `{"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"resourceVersion":"7"}}`},
		{"own precondition kept", "PATCH", "application/merge-patch+json", `{"metadata":{"resourceVersion":"9"}}`, `{"metadata":{"resourceVersion":"9"}}`},
		{"own delete precondition kept", "DELETE", "application/json", `{"preconditions":{"resourceVersion":"9"}}`, `{"preconditions":{"resourceVersion":"9"}}`},
		{"update's version 0 replaced", "PUT", "application/json", `{"metadata":{"resourceVersion":"0"}}`, `{"metadata":{"resourceVersion":"7"}}`},
		{"patch's version 00 replaced", "PATCH", "application/merge-patch+json", `{"metadata":{"resourceVersion":"00"}}`, `{"metadata":{"resourceVersion":"7"}}`},
		{"JSON patch's own version kept", "PATCH", "application/json-patch+json", `[{"op":"replace","path":"/metadata/resourceVersion","value":"9"}]`,
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"9"}]`},
		{"JSON patch's version 0 overridden", "PATCH", "application/json-patch+json", `[{"op":"replace","path":"/metadata/resourceVersion","value":"0"}]`,
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"0"},{"op":"add","path":"/metadata/resourceVersion","value":"7"}]`},
		{"JSON patch's removed version overridden", "PATCH", "application/json-patch+json", `[{"op":"remove","path":"/metadata/resourceVersion"}]`,
			`[{"op":"remove","path":"/metadata/resourceVersion"},{"op":"add","path":"/metadata/resourceVersion","value":"7"}]`},
		{"delete's own version 0 kept", "DELETE", "application/json", `{"preconditions":{"resourceVersion":"0"}}`, `{"preconditions":{"resourceVersion":"0"}}`},
		{"YAML apply left", "PATCH", "application/apply-patch+yaml", "kind: ConfigMap\n", "kind: ConfigMap\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "https://h/api/v1/namespaces/n/configmaps/c", bytes.NewBufferString(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			out, err := withPrecondition(req, "7", "")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(out.Body)
			if !jsonEqual(got, []byte(c.want)) {
				t.Errorf("body %s, want %s", got, c.want)
			}
			if out.ContentLength != int64(len(got)) {
				t.Errorf("ContentLength %d, body %d bytes", out.ContentLength, len(got))
			}
		})
	}
}

// TestBindingKeepsItsOwnVersionZero: the API server compares a binding's
// resourceVersion with the pod's as a string, so its "0" is a precondition
// of its own (one that fails), unlike an update's "0" (none): kept.
func TestBindingKeepsItsOwnVersionZero(t *testing.T) {
	body := `{"kind":"Binding","metadata":{"name":"p","resourceVersion":"0"},"target":{"name":"node"}}`
	req, err := http.NewRequest(http.MethodPost, "https://h/api/v1/namespaces/n/pods/p/binding", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	out, err := withPrecondition(req, "7", "binding")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(out.Body); !jsonEqual(got, []byte(body)) {
		t.Errorf("body %s, want %s", got, body)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// TestResourceVersionOfAResponse reads JSON and protobuf responses, and
// takes no version from a Status.
func TestResourceVersionOfAResponse(t *testing.T) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "42"}}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(cm, &pb); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(cm)
	status, _ := json.Marshal(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status"}, ListMeta: metav1.ListMeta{ResourceVersion: "5"}})
	var pbStatus bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&metav1.Status{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}, &pbStatus); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{{"protobuf", pb.Bytes(), "42"}, {"JSON", js, "42"}, {"JSON Status", status, ""}, {"protobuf Status", pbStatus.Bytes(), ""}} {
		if got := resourceVersionOf("", c.body); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParseTargetUnderAPrefix reads the object a request's URL names when
// the config's Host has a path (a proxy in front of the API server).
func TestParseTargetUnderAPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix, path string
		want         target
	}{
		{"/k8s/clusters/c-1", "/k8s/clusters/c-1/api/v1/namespaces/n/configmaps/c", target{obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}}},
		{"/k8s/clusters/c-1/", "/k8s/clusters/c-1/apis/apps/v1/namespaces/n/deployments/d/scale", target{obj: controller.ObjectRef{Group: "apps", Resource: "deployments", Namespace: "n", Name: "d"}, sub: "scale"}},
		{"/api", "/api/api/v1/namespaces/n/configmaps/c", target{obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}}},
		{"/other", "/api/v1/namespaces/n/configmaps/c", target{obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}}},
	} {
		u, err := url.Parse(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseTarget(u, c.prefix); got != c.want {
			t.Errorf("%s under %s: %+v, want %+v", c.path, c.prefix, got, c.want)
		}
	}
}

// TestParseTarget reads the object a request's URL names.
func TestParseTarget(t *testing.T) {
	for path, want := range map[string]target{
		"/api/v1/namespaces/n/configmaps/c":                   {obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}},
		"/api/v1/namespaces/n/configmaps/c/status":            {obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}, sub: "status"},
		"/api/v1/namespaces/n/status":                         {obj: controller.ObjectRef{Resource: "namespaces", Name: "n"}, sub: "status"},
		"/api/v1/namespaces/n/finalize":                       {obj: controller.ObjectRef{Resource: "namespaces", Name: "n"}, sub: "finalize"},
		"/api/v1/namespaces/n/pods/p/eviction":                {obj: controller.ObjectRef{Resource: "pods", Namespace: "n", Name: "p"}, sub: "eviction"},
		"/apis/apps/v1/namespaces/n/deployments":              {obj: controller.ObjectRef{Group: "apps", Resource: "deployments", Namespace: "n"}},
		"/apis/example.dev/v1/widgets/w":                      {obj: controller.ObjectRef{Group: "example.dev", Resource: "widgets", Name: "w"}},
		"/api/v1/namespaces/n":                                {obj: controller.ObjectRef{Resource: "namespaces", Name: "n"}},
		"/api/v1/watch/namespaces/n/configmaps":               {obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n"}, watch: true},
		"/api/v1/namespaces/n/configmaps?watch=true":          {obj: controller.ObjectRef{Resource: "configmaps", Namespace: "n"}, watch: true},
		"/apis/coordination.k8s.io/v1/namespaces/n/leases/l/": {obj: controller.ObjectRef{Group: "coordination.k8s.io", Resource: "leases", Namespace: "n", Name: "l"}},
	} {
		u, err := url.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseTarget(u, ""); got != want {
			t.Errorf("%s: %+v, want %+v", path, got, want)
		}
	}
}
