package dashboard

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// secrets is the kind whose objects are always redacted.
var secrets = schema.GroupKind{Kind: "Secret"}

// Redacted replaces what the dashboard does not show.
const Redacted = "<redacted>"

// redact returns v as the page may show it: a Secret, or an object of a
// kind the user marked, reduced to its name, namespace and labels,
// wherever it is in v (a list, a slice, a map, a field); a value under a
// marked key prefix replaced entirely; other objects without their managed
// fields (noise). It decides on v's JSON, recursively, so the Go shape
// that carries a Secret does not matter. It errs on the side of hiding: a
// value it cannot encode is not shown.
func (d *Dashboard) redact(key string, v any) any {
	if v == nil {
		return nil
	}
	for _, p := range d.opts.RedactKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return Redacted
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "<not shown: " + err.Error() + ">"
	}
	var obj any
	if err := json.Unmarshal(b, &obj); err != nil {
		return "<not shown: " + err.Error() + ">"
	}
	if d.sensitiveKey(key) {
		// The whole value is of a redacted kind, whatever its shape.
		return reduceAll(obj)
	}
	// A Go Secret encodes without its kind (TypeMeta is usually empty):
	// when v holds one, every object that may be it is reduced.
	return d.redactJSON(obj, holdsSecret(v))
}

// redactJSON returns the JSON value n with every object of a redacted kind
// reduced, the items of a list of such a kind reduced, and, when typed (v
// holds a Go Secret), every object that has metadata, data or stringData
// reduced; other objects lose their managed fields.
func (d *Dashboard) redactJSON(n any, typed bool) any {
	switch n := n.(type) {
	case []any:
		for i, e := range n {
			n[i] = d.redactJSON(e, typed)
		}
		return n
	case map[string]any:
		if d.redactedObject(n) {
			return reduced(n)
		}
		if items, ok := n["items"].([]any); ok && d.redactedList(n) {
			n["items"] = reduceAll(items)
		} else if typed && !ok && hasAny(n, "metadata", "data", "stringData") {
			return reduced(n)
		}
		for k, e := range n {
			n[k] = d.redactJSON(e, typed)
		}
		if md, ok := n["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		return n
	}
	return n
}

// reduceAll reduces every object in n (an object, or a list of them) to
// its identity, and hides any other value.
func reduceAll(n any) any {
	switch n := n.(type) {
	case map[string]any:
		return reduced(n)
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			out[i] = reduceAll(e)
		}
		return out
	}
	return Redacted
}

// redactedObject tells whether m is an object of a redacted kind, by its
// apiVersion and kind.
func (d *Dashboard) redactedObject(m map[string]any) bool {
	gk, ok := groupKind(m)
	return ok && d.isRedactedKind(gk)
}

// redactedList tells whether m is a list of a redacted kind (SecretList),
// whose items may carry no kind of their own.
func (d *Dashboard) redactedList(m map[string]any) bool {
	gk, ok := groupKind(m)
	if !ok || !strings.HasSuffix(gk.Kind, "List") {
		return false
	}
	gk.Kind = strings.TrimSuffix(gk.Kind, "List")
	return d.isRedactedKind(gk)
}

func (d *Dashboard) isRedactedKind(gk schema.GroupKind) bool {
	for _, r := range d.redactedKinds() {
		if gk == r {
			return true
		}
	}
	return false
}

// groupKind reads an object's group and kind from its apiVersion and kind.
func groupKind(m map[string]any) (schema.GroupKind, bool) {
	kind, _ := m["kind"].(string)
	if kind == "" {
		return schema.GroupKind{}, false
	}
	apiVersion, _ := m["apiVersion"].(string)
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// reduced keeps an object's identity only.
func reduced(m map[string]any) map[string]any {
	out := map[string]any{"redacted": "only the name, namespace and labels of this kind are shown"}
	for _, f := range []string{"apiVersion", "kind"} {
		if v, ok := m[f]; ok {
			out[f] = v
		}
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		keep := map[string]any{}
		for _, f := range []string{"name", "namespace", "labels", "uid"} {
			if v, ok := md[f]; ok {
				keep[f] = v
			}
		}
		out["metadata"] = keep
	}
	return out
}
