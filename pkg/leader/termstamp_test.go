package leader

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
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
		r, err := stampCreate(req, "n/lease/a/t1", "lease")
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
	if got.Annotations[TermAnnotation] != "n/lease/a/t1" || got.Labels[TermLeaseLabel] != "lease" ||
		got.Labels["mine"] != "kept" || got.Annotations["note"] != "kept" || got.Data["k"] != "v" || got.Name != "x" {
		t.Errorf("protobuf: stamped to %+v", got.ObjectMeta)
	}

	r = post("application/json", []byte(`{"kind":"X","metadata":{"name":"x","labels":{"mine":"kept"}},"spec":{"big":9007199254740993}}`))
	b, _ = io.ReadAll(r.Body)
	for _, want := range []string{`"big":9007199254740993`, `"lariat.dev/term":"n/lease/a/t1"`, `"lariat.dev/term-lease":"lease"`, `"mine":"kept"`} {
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
