package cache

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
