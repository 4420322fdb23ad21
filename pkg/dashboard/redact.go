package dashboard

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// secrets is the kind whose objects are always redacted.
var secrets = schema.GroupKind{Kind: "Secret"}

// Redacted replaces what the dashboard does not show.
const Redacted = "<redacted>"

// redact returns v as the page may show it: a Secret, or an object of a
// kind the user marked, reduced to its name, namespace and labels; a value
// under a marked key prefix replaced entirely; other objects without their
// managed fields (noise). It errs on the side of hiding: a value it cannot
// encode is not shown.
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
	m, ok := obj.(map[string]any)
	if !ok {
		return obj
	}
	if d.sensitive(key, v, m) {
		return reduced(m)
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return m
}

// sensitive tells whether an object is of a redacted kind, by its Go type,
// its apiVersion and kind, or its key.
func (d *Dashboard) sensitive(key string, v any, m map[string]any) bool {
	switch v.(type) {
	case *corev1.Secret, corev1.Secret, *corev1.SecretList:
		return true
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	for _, gk := range append([]schema.GroupKind{secrets}, d.opts.RedactKinds...) {
		if (kind == gk.Kind && group == gk.Group) || strings.HasPrefix(key, kubedescriptor.KeyPrefix(gk)) {
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
