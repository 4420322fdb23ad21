package cache

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// jsonWidgetList is jsonWidget's list type.
type jsonWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []jsonWidget `json:"items"`
}

func (l *jsonWidgetList) DeepCopyObject() runtime.Object {
	out := &jsonWidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*jsonWidget))
	}
	return out
}

// TestCompactWireJSONListIsReadOrDecodedWhole shows that a JSON list page
// whose items are all taken is read from the wire (its continue token and
// remaining count too), and that one with an item the reader does not
// take is decoded whole by the client's decoder, none of it from the wire.
func TestCompactWireJSONListIsReadOrDecodedWhole(t *testing.T) {
	item := func(name, extra string) string {
		return fmt.Sprintf(`{"apiVersion":"test.lariat.dev/v1","kind":"Widget","metadata":{"name":%q,"resourceVersion":"5"%s,"managedFields":[{"manager":"m"}]},"spec":{"n":1}}`, name, extra)
	}
	list := func(items ...string) []byte {
		return []byte(`{"apiVersion":"test.lariat.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"9","continue":"c1","remainingItemCount":4},"items":[` +
			strings.Join(items, ",") + `]}`)
	}
	for _, tc := range []struct {
		what  string
		data  []byte
		wired bool
		names []string
	}{
		{"every item taken", list(item("a", ""), item("b", "")), true, []string{"a", "b"}},
		// The decoders keep the last name.
		{"an item with its name twice", list(item("a", ""), item("b", `,"name":"c"`)), false, []string{"a", "c"}},
	} {
		c, err := newCodec(&jsonWidget{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		d := wireDecoder{inner: typedJSONDecoder(t), codec: c, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
		l := &wireList{example: &jsonWidgetList{}}
		out, _, err := d.Decode(tc.data, nil, l)
		if err != nil || out != l {
			t.Fatalf("%s: decoded into %T, err %v", tc.what, out, err)
		}
		if l.ResourceVersion != "9" || l.Continue != "c1" || l.RemainingItemCount == nil || *l.RemainingItemCount != 4 || len(l.Items) != 2 {
			t.Fatalf("%s: list read as %+v with %d items", tc.what, l.ListMeta, len(l.Items))
		}
		for i, want := range tc.names {
			var obj runtime.Object = l.Items[i]
			w, wired := l.Items[i].(*wireObject)
			if wired != tc.wired {
				t.Errorf("%s: item %d is a %T", tc.what, i, l.Items[i])
			}
			if wired {
				if obj, err = w.decode(false); err != nil {
					t.Fatal(err)
				}
			}
			widget, ok := obj.(*jsonWidget)
			if !ok || widget.Name != want || (widget.ManagedFields != nil) == wired || widget.Spec["n"] != int64(1) {
				t.Errorf("%s: item %d is %#v", tc.what, i, obj)
			}
		}
	}
}

// BenchmarkCompactListArrival measures what a compact cache does with one
// page of 500 Pods as the API server lists them (protobuf, managedFields
// from a manager each): decoded whole into a PodList by client-go's
// decoder, each Pod stripped and encoded again (decoded), or read from the
// wire into a wireList (wire). Per page.
func BenchmarkCompactListArrival(b *testing.B) {
	pods := benchPods(500)
	for i := range pods {
		pods[i].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{},"f:podIP":{}}}`)}}}
	}
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: pods}
	var buf bytes.Buffer
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	if err := s.Encode(list, &buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("decoded", func(b *testing.B) {
		c, _ := newCodec(&corev1.Pod{}, 0)
		b.ReportAllocs()
		for b.Loop() {
			into := &corev1.PodList{}
			if _, _, err := s.Decode(data, nil, into); err != nil {
				b.Fatal(err)
			}
			for i := range into.Items {
				stripped, _ := StripMetadata(&into.Items[i])
				if _, err := c.encode(stripped); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		c, _ := newCodec(&corev1.Pod{}, 0)
		d := wireDecoder{inner: s, codec: c, apiVersion: "v1", kind: "Pod"}
		b.ReportAllocs()
		for b.Loop() {
			l := &wireList{example: &corev1.PodList{}}
			if _, _, err := d.Decode(data, nil, l); err != nil || len(l.Items) != 500 || c.wired.Load() == 0 {
				b.Fatalf("not read from the wire: %v", err)
			}
		}
	})
}

// TestCompactWireJSONListOfInvalidJSONIsLeftToTheDecoder shows that a list
// body that is not valid JSON inside an item's spec (which the reader
// skips) is not read from the wire: the decoder's error comes back.
func TestCompactWireJSONListOfInvalidJSONIsLeftToTheDecoder(t *testing.T) {
	c, err := newCodec(&jsonWidget{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"apiVersion":"test.lariat.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"9"},"items":[` +
		`{"apiVersion":"test.lariat.dev/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"n":tru}}]}`)
	d := wireDecoder{inner: typedJSONDecoder(t), codec: c, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
	if _, _, err := d.Decode(data, nil, &wireList{example: &jsonWidgetList{}}); err == nil || c.wired.Load() != 0 {
		t.Fatalf("a list with invalid JSON: err %v, %d items read from the wire", err, c.wired.Load())
	}
}
