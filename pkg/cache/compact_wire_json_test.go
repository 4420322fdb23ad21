package cache

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// jsonWidget is a typed custom resource with a free-form spec, decoded by
// apimachinery's JSON serializer as Lariat's client decodes such kinds.
type jsonWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]any `json:"spec,omitempty"`
	Status            map[string]any `json:"status,omitempty"`
}

func (w *jsonWidget) DeepCopyObject() runtime.Object {
	out := &jsonWidget{TypeMeta: w.TypeMeta}
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec, out.Status = runtime.DeepCopyJSON(w.Spec), runtime.DeepCopyJSON(w.Status)
	return out
}

var jsonWidgetGVK = schema.GroupVersionKind{Group: "test.lariat.dev", Version: "v1", Kind: "Widget"}

// typedJSONDecoder is the decoder Lariat's client uses for a typed kind
// that does not speak protobuf (pkg/client factory.go: the scheme's codecs
// without conversion, JSON).
func typedJSONDecoder(t testing.TB) runtime.Decoder {
	t.Helper()
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(jsonWidgetGVK, &jsonWidget{})
	codecs := serializer.NewCodecFactory(s).WithoutConversion()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	return codecs.DecoderToVersion(info.Serializer, jsonWidgetGVK.GroupVersion())
}

// wireJSONCase is an object as it may come in a watch event, and whether
// the wire reader takes it (false: client-go's decoder reads it).
type wireJSONCase struct {
	name  string
	data  string
	taken bool
}

func wireJSONCases() []wireJSONCase {
	mf := `"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"test.lariat.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:size":{}}}}]`
	head := `"apiVersion":"test.lariat.dev/v1","kind":"Widget"`
	spec := `"spec":{"size":9007199254740993,"ratio":1.0,"e":1e3,"neg":-0,"f":0.1,"nested":{"x":[1,"two",null,true,{"}":"]"}]}},"status":{"ok":true}`
	meta := func(members ...string) string { return `"metadata":{` + strings.Join(members, ",") + `}` }
	name, ns, rv := `"name":"w"`, `"namespace":"ns"`, `"resourceVersion":"7"`
	labels, ann := `"labels":{"app":"shop","tier":"front"}`, `"annotations":{"a":"b"}`
	obj := func(members ...string) string { return "{" + strings.Join(members, ",") + "}" }
	plain := obj(head, meta(name, ns, `"uid":"u1"`, rv, labels, ann, mf), spec)
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, []byte(plain), " ", "\t")
	return []wireJSONCase{
		{"managedFields last", plain, true},
		{"managedFields first", obj(head, meta(mf, name, ns, rv, labels), spec), true},
		{"managedFields in the middle", obj(head, meta(name, ns, mf, rv, labels), spec), true},
		{"no managedFields", obj(head, meta(name, ns, rv, labels), spec), true},
		{"metadata first, kind last", obj(meta(name, mf, ns), spec, `"kind":"Widget"`, `"apiVersion":"test.lariat.dev/v1"`), true},
		{"pretty printed", pretty.String(), true},
		{"spaces around everything", " { " + strings.ReplaceAll(strings.ReplaceAll(plain[1:], ":", " : "), ",", " ,\n ") + "\n", true},
		{"unknown fields", obj(head, `"extra":{"k":[1,2]}`, meta(name, `"unknownMeta":"x"`, mf, ns), spec), true},
		{"escaped keys and values", obj(`"apiVersion":"test.lariat.dev\/v1"`, `"\u006bind":"Widget"`,
			`"met\u0061data":{"\u006eame":"w\u00e9","namespace":"n\"s","managed\u0046ields":[],"labels":{"a\u0062":"caf\u00e9"},"annotations":{"q":"\"x\"\u2028\\"}}`, spec), true},
		{"invalid UTF-8", obj(head, meta("\"name\":\"w\xff\"", mf, `"labels":{"k":"v`+"\xfe"+`"}`), spec), true},
		{"a key twice in the spec", obj(head, meta(name, mf), `"spec":{"size":1,"size":2}`), true},
		{"annotations twice", obj(head, meta(name, `"annotations":{"a":"1"}`, mf, `"annotations":{"b":"2"}`), spec), true},
		{"managedFields null", obj(head, meta(name, `"managedFields":null`), spec), true},
		{"labels null", obj(head, meta(name, `"labels":null`, mf), spec), true},
		{"labels empty", obj(head, meta(name, `"labels":{}`, mf), spec), true},
		{"metadata twice", obj(head, meta(name, mf), meta(`"name":"v"`)), false},
		{"name twice", obj(head, meta(name, mf, `"name":"v"`), spec), false},
		{"managedFields twice", obj(head, meta(name, mf, mf), spec), false},
		{"a label twice", obj(head, meta(name, `"labels":{"a":"1","a":"2"}`), spec), false},
		{"kind twice", obj(head, `"kind":"Widget"`, meta(name), spec), false},
		{"Kind in another case", obj(head, `"Kind":"Gadget"`, meta(name), spec), false},
		{"Metadata in another case", obj(head, meta(name), `"Metadata":{"name":"v"}`), false},
		{"another kind", obj(`"apiVersion":"test.lariat.dev/v1","kind":"Gadget"`, meta(name), spec), false},
		{"another version", obj(`"apiVersion":"test.lariat.dev/v2","kind":"Widget"`, meta(name), spec), false},
		{"a bookmark", obj(head, meta(rv, `"annotations":{"k8s.io/initial-events-end":"true"}`)), false},
		{"a list's items", obj(head, meta(name), `"items":[]`), false},
		{"a label that is not a string", obj(head, meta(name, `"labels":{"a":1}`), spec), false},
		{"metadata null", obj(head, `"metadata":null`, spec), false},
		{"a name that is not a string", obj(head, meta(`"name":7`), spec), false},
	}
}

// withoutManagedFields is obj, decoded by the client's decoder, without
// its managedFields: what the wire reader must keep.
func withoutManagedFieldsOf(obj runtime.Object) runtime.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		return u
	}
	obj.(*jsonWidget).ManagedFields = nil
	return obj
}

// TestCompactWireJSONKeepsTheObjectWithoutManagedFields shows that a
// custom resource kept from the wire JSON decodes to exactly what the
// client's decoder reads of the whole object, managedFields removed
// (compared with reflect.DeepEqual: int64 and float64 told apart), typed
// and unstructured, with unknown fields, escapes, invalid UTF-8, keys
// written twice and odd spacing; that the metadata kept beside it is
// right; and that what it cannot take for sure is left to the decoder.
func TestCompactWireJSONKeepsTheObjectWithoutManagedFields(t *testing.T) {
	decoders := map[string]struct {
		example runtime.Object
		decoder runtime.Decoder
	}{
		"typed":        {&jsonWidget{}, typedJSONDecoder(t)},
		"unstructured": {&unstructured.Unstructured{}, unstructured.UnstructuredJSONScheme},
	}
	for what, d := range decoders {
		for _, tc := range wireJSONCases() {
			c, err := newCodec(d.example, 0)
			if err != nil {
				t.Fatal(err)
			}
			data := []byte(tc.data)
			o := c.fromWireJSON(data, "test.lariat.dev/v1", "Widget")
			if (o != nil) != tc.taken {
				t.Errorf("%s, %s: taken from the wire %v, want %v", what, tc.name, o != nil, tc.taken)
				continue
			}
			if o == nil {
				continue
			}
			full, _, err := d.decoder.Decode(data, nil, nil)
			if err != nil {
				t.Errorf("%s, %s: taken from the wire, but the client's decoder fails: %v", what, tc.name, err)
				continue
			}
			want := withoutManagedFieldsOf(full)
			got, err := o.decode(false)
			if err != nil {
				t.Errorf("%s, %s: %v", what, tc.name, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s, %s: decoded from the wire form:\n%s\nwant:\n%s", what, tc.name, g, w)
			}
			m, _ := apimeta.Accessor(want)
			if o.Name != m.GetName() || o.Namespace != m.GetNamespace() || o.ResourceVersion != m.GetResourceVersion() ||
				len(o.Labels) != len(m.GetLabels()) {
				t.Errorf("%s, %s: metadata kept beside the object %+v, want %s/%s %s %v", what, tc.name, o.compactMeta,
					m.GetNamespace(), m.GetName(), m.GetResourceVersion(), m.GetLabels())
			}
			for k, v := range m.GetLabels() {
				if o.Labels[k] != v {
					t.Errorf("%s, %s: label %q is %q beside the object, want %q", what, tc.name, k, o.Labels[k], v)
				}
			}
		}
	}
}

// TestCompactWireJSONAgreesWithTheDecoderOnEveryEdit changes the object one
// byte at a time (removed, or replaced by a byte of JSON's syntax) and,
// for every result that is still valid JSON (as the bytes of a watch event
// the client parsed always are), checks that the wire reader either leaves
// it to the decoder or keeps what the decoder reads minus managedFields.
func TestCompactWireJSONAgreesWithTheDecoderOnEveryEdit(t *testing.T) {
	base := []byte(wireJSONCases()[2].data) // managedFields in the middle
	decoders := map[string]struct {
		example runtime.Object
		decoder runtime.Decoder
	}{
		"typed":        {&jsonWidget{}, typedJSONDecoder(t)},
		"unstructured": {&unstructured.Unstructured{}, unstructured.UnstructuredJSONScheme},
	}
	tried, taken := 0, 0
	for i := range base {
		var edits [][]byte
		edits = append(edits, append(bytes.Clone(base[:i]), base[i+1:]...))
		for _, b := range []byte(`"\{}[],: x1`) {
			e := bytes.Clone(base)
			e[i] = b
			edits = append(edits, e)
		}
		for _, data := range edits {
			if !json.Valid(data) {
				continue
			}
			for what, d := range decoders {
				tried++
				c, _ := newCodec(d.example, 0)
				o := c.fromWireJSON(data, "test.lariat.dev/v1", "Widget")
				if o == nil {
					continue
				}
				taken++
				full, _, err := d.decoder.Decode(data, nil, nil)
				if err != nil {
					t.Errorf("%s: %s taken from the wire, but the client's decoder fails: %v", what, data, err)
					continue
				}
				got, err := o.decode(false)
				if err != nil {
					t.Errorf("%s: %s taken from the wire, and then: %v", what, data, err)
					continue
				}
				if want := withoutManagedFieldsOf(full); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s read from the wire as %#v, want %#v", what, data, got, want)
				}
				if m, _ := apimeta.Accessor(got); o.Name != m.GetName() || o.ResourceVersion != m.GetResourceVersion() || len(o.Labels) != len(m.GetLabels()) {
					t.Errorf("%s: %s kept beside the object as %+v", what, data, o.compactMeta)
				}
			}
		}
	}
	t.Logf("%d valid edits decoded, %d taken from the wire", tried, taken)
	if taken == 0 {
		t.Fatal("no edit was taken from the wire: the test proves nothing")
	}
}

// TestCompactWireJSONLeavesCutBytesToTheDecoder shows that no prefix of an
// object is taken from the wire (nor panics), and that JSON given to the
// wire decoder of a protobuf kind goes to the decoder.
func TestCompactWireJSONLeavesCutBytesToTheDecoder(t *testing.T) {
	c, err := newCodec(&jsonWidget{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(wireJSONCases()[0].data)
	for n := range len(data) {
		if o := c.fromWireJSON(data[:n], "test.lariat.dev/v1", "Widget"); o != nil {
			t.Errorf("%d of %d bytes were taken from the wire: %q", n, len(data), data[:n])
		}
	}
	if c.fromWireJSON(data, "test.lariat.dev/v1", "Widget") == nil {
		t.Fatal("the whole object was not taken: the test proves nothing")
	}
	pods, err := newCodec(&jsonWidget{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pods.proto = true
	inner := &countingDecoder{}
	d := wireDecoder{inner: inner, codec: pods, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
	if _, _, err := d.Decode(data, nil, nil); err != nil || inner.calls != 1 || pods.wired.Load() != 0 {
		t.Fatalf("JSON given to a protobuf kind's wire decoder: err %v, %d decoder calls, %d taken", err, inner.calls, pods.wired.Load())
	}
}

// countingDecoder counts its calls and decodes nothing.
type countingDecoder struct{ calls int }

func (d *countingDecoder) Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	d.calls++
	return &unstructured.Unstructured{}, nil, nil
}

// BenchmarkCompactArrivalJSON measures what a compact cache does with one
// custom resource of a watch event (typed, a Pod template in its spec,
// managedFields from three managers, as JSON from the API server): decoded
// whole by the client's decoder, stripped and encoded again (decoded), or
// kept from the wire bytes (wire).
func BenchmarkCompactArrivalJSON(b *testing.B) {
	pod := benchPod(7)
	template, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
	if err != nil {
		b.Fatal(err)
	}
	w := &jsonWidget{TypeMeta: metav1.TypeMeta{APIVersion: "test.lariat.dev/v1", Kind: "Widget"}, ObjectMeta: pod.ObjectMeta,
		Spec: map[string]any{"replicas": int64(3), "template": template}, Status: map[string]any{"replicas": int64(3)}}
	fields := json.RawMessage(`{"f:metadata":{"f:annotations":{".":{},"f:prometheus.io/path":{},"f:prometheus.io/port":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"api\"}":{".":{},"f:args":{},"f:env":{},"f:image":{},"f:ports":{},"f:resources":{}}}}}}}`)
	for _, m := range []string{"operator", "injector", "status-manager"} {
		w.ManagedFields = append(w.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "test.lariat.dev/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}})
	}
	data, err := json.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d bytes of JSON", len(data))
	b.Run("decoded", func(b *testing.B) {
		c, _ := newCodec(&jsonWidget{}, 0)
		d := typedJSONDecoder(b)
		b.ReportAllocs()
		for b.Loop() {
			obj, _, err := d.Decode(data, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			stripped, _ := StripMetadata(obj)
			if _, err := c.encode(stripped); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		c, _ := newCodec(&jsonWidget{}, 0)
		b.ReportAllocs()
		for b.Loop() {
			if c.fromWireJSON(data, "test.lariat.dev/v1", "Widget") == nil {
				b.Fatal("not read from the wire")
			}
		}
	})
}
