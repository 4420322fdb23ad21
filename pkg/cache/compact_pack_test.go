package cache

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestCompactPackRoundTrips stores objects that compress (text), that do
// not (random bytes) and that are too small to try, and reads each back
// whole: the compressed form must never cost data, including binary data
// a decoder could alias.
func TestCompactPackRoundTrips(t *testing.T) {
	random := make([]byte, 4096)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		obj    *corev1.ConfigMap
		packed bool
	}{
		{"text compresses", configMap("text", map[string]string{"config.yaml": strings.Repeat("key: value\nother: thing\n", 100)}, nil), true},
		{"random does not", configMap("random", nil, map[string][]byte{"blob": random}), false},
		{"small is left as is", configMap("s", nil, nil), false},
	}
	for _, tc := range cases {
		for _, proto := range []bool{true, false} {
			c, err := newCodec(&corev1.ConfigMap{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			c.proto = proto
			stored, err := c.encode(tc.obj.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			o := stored.(*compactObject)
			if o.packed != tc.packed {
				t.Errorf("%s (proto %v): packed = %v, want %v (%d bytes held)", tc.name, proto, o.packed, tc.packed, len(o.data))
			}
			got, err := o.decode(false)
			if err != nil {
				t.Fatal(err)
			}
			if want, have := jsonOf(t, tc.obj), jsonOf(t, got); want != have {
				t.Errorf("%s (proto %v): read back\n%s\nwant\n%s", tc.name, proto, have, want)
			}
		}
	}
}

func configMap(name string, data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"app": "x"}},
		Data:       data, BinaryData: binary,
	}
}

func jsonOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
