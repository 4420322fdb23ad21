package cache

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestAdv4CompactWireJSONListPagesAsTheDecoderReadsThem: JSON list pages an
// attacker shapes (items without their type, of another version or kind,
// a custom listKind, a folded "items" key, remainingItemCount null or
// written as a float, a list's resourceVersion unlike its items', escapes
// in continue) read through the wire decoder give the ListMeta and, item for
// item, the objects (minus managedFields) the client's decoder gives.
func TestAdv4CompactWireJSONListPagesAsTheDecoderReadsThem(t *testing.T) {
	item := func(apiVersion, kind, name string) string {
		head := ""
		if apiVersion != "" {
			head = `"apiVersion":"` + apiVersion + `","kind":"` + kind + `",`
		}
		return `{` + head + `"metadata":{"name":"` + name + `","resourceVersion":"3","labels":{"l":"` + name + `"},"managedFields":[{"manager":"m"}]},"spec":{"n":1}}`
	}
	v1 := func(name string) string { return item("test.lariat.dev/v1", "Widget", name) }
	list := func(kind, meta string, items ...string) string {
		return `{"apiVersion":"test.lariat.dev/v1","kind":"` + kind + `","metadata":` + meta + `,"items":[` + strings.Join(items, ",") + `]}`
	}
	meta := `{"resourceVersion":"9","continue":"c\u002b1","remainingItemCount":2}`
	pages := map[string]string{
		"every item taken, list RV unlike items'": list("WidgetList", meta, v1("a"), v1("b")),
		"an item without its type":                list("WidgetList", meta, v1("a"), item("", "", "b")),
		"an item of another version":              list("WidgetList", meta, v1("a"), item("test.lariat.dev/v2", "Widget", "b")),
		"an item of another kind":                 list("WidgetList", meta, v1("a"), item("test.lariat.dev/v1", "Gadget", "b")),
		"a custom listKind":                       list("WidgetCollection", meta, v1("a"), v1("b")),
		"remainingItemCount null":                 list("WidgetList", `{"resourceVersion":"9","remainingItemCount":null}`, v1("a")),
		"remainingItemCount as a float":           list("WidgetList", `{"resourceVersion":"9","remainingItemCount":2.0}`, v1("a")),
		"items folded by the long s":              `{"apiVersion":"test.lariat.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"9"},"item\u017f":[` + v1("x") + `],"items":[` + v1("a") + `]}`,
		"no items":                                list("WidgetList", meta),
	}
	decoders := map[string]struct {
		list    runtime.Object
		example runtime.Object
		decoder runtime.Decoder
	}{
		"typed":        {&jsonWidgetList{}, &jsonWidget{}, typedJSONDecoder(t)},
		"unstructured": {&unstructured.UnstructuredList{}, &unstructured.Unstructured{}, unstructured.UnstructuredJSONScheme},
	}
	for what, d := range decoders {
		for name, page := range pages {
			data := []byte(page)
			if !json.Valid(data) {
				t.Fatalf("%s: not valid JSON", name)
			}
			full := d.list.DeepCopyObject()
			fullErr := error(nil)
			if _, _, fullErr = d.decoder.Decode(data, nil, full); fullErr != nil {
				t.Logf("%s, %s: the client's decoder fails: %v", what, name, fullErr)
			}
			c, err := newCodec(d.example, 0)
			if err != nil {
				t.Fatal(err)
			}
			wd := wireDecoder{inner: d.decoder, codec: c, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
			l := &wireList{example: d.list.DeepCopyObject()}
			_, _, err = wd.Decode(data, nil, l)
			if (err != nil) != (fullErr != nil) {
				t.Errorf("%s, %s: wire decode err %v, the client's decoder's %v", what, name, err, fullErr)
				continue
			}
			if err != nil {
				continue
			}
			lm, _ := apimeta.ListAccessor(full)
			if l.ResourceVersion != lm.GetResourceVersion() || l.Continue != lm.GetContinue() ||
				!reflect.DeepEqual(l.RemainingItemCount, lm.GetRemainingItemCount()) {
				t.Errorf("%s, %s: list metadata %+v, want %q %q %v", what, name, l.ListMeta,
					lm.GetResourceVersion(), lm.GetContinue(), lm.GetRemainingItemCount())
			}
			want, _ := apimeta.ExtractList(full)
			if len(l.Items) != len(want) {
				t.Errorf("%s, %s: %d items, want %d", what, name, len(l.Items), len(want))
				continue
			}
			for i := range want {
				got := l.Items[i]
				if w, ok := got.(*wireObject); ok {
					if got, err = w.decode(false); err != nil {
						t.Fatal(err)
					}
				} else {
					got = withoutManagedFieldsOf(got)
				}
				if exp := withoutManagedFieldsOf(want[i]); !reflect.DeepEqual(got, exp) {
					g, _ := json.Marshal(got)
					e, _ := json.Marshal(exp)
					t.Errorf("%s, %s: item %d is\n%s\nwant\n%s", what, name, i, g, e)
				}
			}
		}
	}
	// The comparisons above hold also when nothing is read from the wire:
	// the plain page must be.
	cd, _ := newCodec(&jsonWidget{}, 0)
	wd := wireDecoder{inner: typedJSONDecoder(t), codec: cd, apiVersion: "test.lariat.dev/v1", kind: "Widget"}
	l := &wireList{example: &jsonWidgetList{}}
	if _, _, err := wd.Decode([]byte(pages["every item taken, list RV unlike items'"]), nil, l); err != nil || cd.wired.Load() != 2 {
		t.Fatalf("the plain page: err %v, %d items from the wire, want 2", err, cd.wired.Load())
	}
}
