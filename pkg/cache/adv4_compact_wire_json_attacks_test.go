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

// adv4JSONCases are objects an attacker writes to confuse the wire reader:
// keys that fold to the ones it reads under Unicode case folding (encoding/json
// matches the type keys that way), escaped keys, fields named managedFields
// outside metadata (a CRD with x-kubernetes-preserve-unknown-fields),
// escaped labels, a deep and a large spec.
func adv4JSONCases() map[string]string {
	head := `"apiVersion":"test.lariat.dev/v1","kind":"Widget"`
	mf := `"managedFields":[{"manager":"m","operation":"Update"}]`
	meta := `"metadata":{"name":"w","namespace":"ns","resourceVersion":"7","labels":{"app":"a"},` + mf + `}`
	deep := strings.Repeat(`{"d":[`, 2000) + "1" + strings.Repeat(`]}`, 2000)
	return map[string]string{
		"kind folded by the Kelvin sign (escaped)":   `{` + head + `,"\u212aind":"Gadget",` + meta + `}`,
		"kind folded by the Kelvin sign (raw)":       `{` + head + ",\"\u212aind\":\"Gadget\"," + meta + `}`,
		"apiVersion folded by the long s":            `{` + head + `,"apiVer\u017fion":"other/v1",` + meta + `}`,
		"items folded by the long s":                 `{` + head + `,"item\u017f":[1],` + meta + `}`,
		"managedFields key escaped, last":            `{` + head + `,"metadata":{"name":"w","man\u0061gedFields":[{"manager":"m"}]}}`,
		"managedFields key escaped, only after name": `{"metadata":{"n\u0061me":"w","managedFields":null},` + head + `}`,
		"managedFields outside metadata":             `{` + head + `,"managedFields":[1],` + meta + `,"spec":{"metadata":{"managedFields":[2],"name":"x"},"managedFields":3}}`,
		"metadata key escaped":                       `{` + head + `,"met\u0061data":{"name":"w",` + mf + `,"labels":{"app\u002fx":"a\u0062"}}}`,
		"labels escaped, managedFields first":        `{` + head + `,"metadata":{` + mf + `,"labels":{"k\u00e9":"v\u00e9"},"name":"w"}}`,
		"a deep spec":                                `{` + head + `,` + meta + `,"spec":` + deep + `}`,
		"a large spec":                               `{` + head + `,` + meta + `,"spec":{"s":"` + strings.Repeat(`x\"\\`, 300000) + `"}}`,
		"whitespace around every member":             "{ \n" + head + " ,\r\n\t" + strings.ReplaceAll(meta, ",", " ,\n ") + " }\n",
	}
}

// TestAdv4CompactWireJSONResistsFoldedAndEscapedKeys: every case is either
// left to the client's decoder or read from the wire into exactly what that
// decoder reads minus managedFields, with the name, namespace,
// resourceVersion and labels kept beside it equal to the object's.
func TestAdv4CompactWireJSONResistsFoldedAndEscapedKeys(t *testing.T) {
	decoders := map[string]struct {
		example runtime.Object
		decoder runtime.Decoder
	}{
		"typed":        {&jsonWidget{}, typedJSONDecoder(t)},
		"unstructured": {&unstructured.Unstructured{}, unstructured.UnstructuredJSONScheme},
	}
	taken := 0
	for what, d := range decoders {
		for name, data := range adv4JSONCases() {
			if !json.Valid([]byte(data)) {
				t.Fatalf("%s: not valid JSON", name)
			}
			c, err := newCodec(d.example, 0)
			if err != nil {
				t.Fatal(err)
			}
			o := c.fromWireJSON([]byte(data), "test.lariat.dev/v1", "Widget")
			if o == nil {
				t.Logf("%s, %s: left to the decoder", what, name)
				continue
			}
			taken++
			full, _, err := d.decoder.Decode([]byte(data), nil, nil)
			if err != nil {
				t.Errorf("%s, %s: taken from the wire, but the client's decoder fails: %v", what, name, err)
				continue
			}
			want := withoutManagedFieldsOf(full)
			got, err := o.decode(false)
			if err != nil {
				t.Errorf("%s, %s: %v", what, name, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s, %s: from the wire:\n%.400s\nwant:\n%.400s", what, name, g, w)
			}
			m, _ := apimeta.Accessor(want)
			if o.Name != m.GetName() || o.Namespace != m.GetNamespace() || o.ResourceVersion != m.GetResourceVersion() ||
				!reflect.DeepEqual(o.Labels, m.GetLabels()) {
				t.Errorf("%s, %s: kept beside %+v, want %s/%s %s %v", what, name, o.compactMeta,
					m.GetNamespace(), m.GetName(), m.GetResourceVersion(), m.GetLabels())
			}
		}
	}
	if taken == 0 {
		t.Fatal("no case was read from the wire: the comparison checked nothing")
	}
}
