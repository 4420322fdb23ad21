package cache

import (
	"reflect"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// TestAdv4CompactWireJSONListItemsKeepTheirType: the items of a typed
// custom resource's list, as the API server sends them in JSON (each item
// with its apiVersion and kind), decode in client-go's list decode with
// their TypeMeta set (only the list's own TypeMeta is cleared), and the
// compact cache that decodes lists that way keeps it. Read from the wire,
// each item must decode to that same object minus managedFields.
func TestAdv4CompactWireJSONListItemsKeepTheirType(t *testing.T) {
	data := []byte(`{"apiVersion":"test.lariat.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"9"},"items":[` +
		`{"apiVersion":"test.lariat.dev/v1","kind":"Widget","metadata":{"name":"a","namespace":"n","resourceVersion":"5","managedFields":[{"manager":"m"}]},"spec":{"n":1}},` +
		`{"apiVersion":"test.lariat.dev/v1","kind":"Widget","metadata":{"name":"b","namespace":"n","resourceVersion":"6"},"spec":{"n":2}}]}`)
	dec := typedJSONDecoder(t)
	full := &jsonWidgetList{}
	if _, _, err := dec.Decode(data, nil, full); err != nil {
		t.Fatal(err)
	}
	want, err := apimeta.ExtractList(full)
	if err != nil || len(want) != 2 {
		t.Fatalf("client-go's decode: %d items, err %v", len(want), err)
	}
	c, err := newCodec(&jsonWidget{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := wireDecoder{inner: dec, codec: c, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
	l := &wireList{example: &jsonWidgetList{}}
	if out, _, err := d.Decode(data, nil, l); err != nil || out != l || len(l.Items) != 2 {
		t.Fatalf("wire decode: %T, %d items, err %v", out, len(l.Items), err)
	}
	for i, item := range l.Items {
		w, ok := item.(*wireObject)
		if !ok {
			t.Fatalf("item %d is a %T, not read from the wire", i, item)
		}
		got, err := w.decode(false)
		if err != nil {
			t.Fatal(err)
		}
		if exp := withoutManagedFieldsOf(want[i]); !reflect.DeepEqual(got, exp) {
			t.Errorf("item %d read from the wire is\n%#v\nclient-go's list decode gives (minus managedFields)\n%#v", i, got, exp)
		}
	}
}
