package kubedescriptor

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Equivalent tells whether two values of a key need no update. It is the
// descriptors' ValueComparator.
//
// The API server adds metadata, status and defaults to what was applied, so
// a live object (one with a resourceVersion, as Retrieve reports) is
// compared with a desired one only on the fields the desired object sets:
// maps must hold the desired entries, lists must have the same length and
// match element by element, and scalars must be equal. Null, zero scalars
// and empty maps and lists in the desired object count as unset, because a
// typed Go object cannot tell them apart and the server defaults them. Two
// desired objects are equivalent when each is equivalent to the other in
// that sense. Status and metadata other than name, namespace, labels,
// annotations and ownerReferences are ignored.
//
// Because only set fields are compared, a field added to the live object
// that the desired value does not set goes unnoticed. Removing a field from
// a desired value is noticed: Retrieve reports a live object equivalent to
// its desired value as the desired value, so the scheduler compares the old
// and new desired values.
func Equivalent(oldValue, newValue any) bool {
	a, okA := normalize(oldValue)
	b, okB := normalize(newValue)
	if !okA || !okB {
		return reflect.DeepEqual(oldValue, newValue)
	}
	switch {
	case a.live:
		return subset(b.obj, a.obj)
	case b.live:
		return subset(a.obj, b.obj)
	default:
		return subset(a.obj, b.obj) && subset(b.obj, a.obj)
	}
}

type normalized struct {
	obj  map[string]any
	live bool
}

func normalize(v any) (normalized, bool) {
	obj, ok := v.(runtime.Object)
	if !ok || isNil(v) {
		return normalized{}, false
	}
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.UnstructuredContent()
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return normalized{}, false
		}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		// apiVersion and kind are left out because one object may be
		// desired in one version and retrieved in another, and typed
		// objects often leave them empty; the descriptor's Validate
		// already checked the kind.
		if k != "status" && k != "metadata" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	md, _ := m["metadata"].(map[string]any)
	rv, _ := md["resourceVersion"].(string)
	keep := map[string]any{}
	// The rest of the metadata (uid, resourceVersion, managedFields,
	// timestamps...) is the server's.
	for _, f := range []string{"name", "namespace", "labels", "annotations", "ownerReferences"} {
		if x, ok := md[f]; ok {
			keep[f] = x
		}
	}
	out["metadata"] = keep
	return normalized{obj: out, live: rv != ""}, true
}

// subset tells whether every field set in want has the same value in have.
func subset(want, have any) bool {
	if unset(want) {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !subset(wv, h[k]) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	default:
		return scalarEqual(want, have)
	}
}

// scalarEqual compares JSON scalars, whose numbers may be int64 or float64
// depending on who decoded them.
func scalarEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// unset tells whether a desired field counts as not set.
func unset(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	if n, ok := number(v); ok {
		return n == 0
	}
	return false
}

// equal is the descriptor's value comparator. A live object (one with a
// resourceVersion, as Retrieve reports it) equals a desired value when it
// has not drifted from what applying that value stores (actualValue) and
// that value is the desired one; two desired values are compared with
// Equivalent.
func (k *kind) equal(key string, a, b any) bool {
	switch la, lb := isLive(a), isLive(b); {
	case la && !lb:
		v, inSync := k.actualValue(k.noCallbackContext(), key, a.(runtime.Object), b)
		return inSync && Equivalent(v, b)
	case lb && !la:
		v, inSync := k.actualValue(k.noCallbackContext(), key, b.(runtime.Object), a)
		return inSync && Equivalent(a, v)
	}
	return Equivalent(a, b)
}

func isLive(v any) bool {
	if _, ok := v.(runtime.Object); !ok || isNil(v) {
		return false
	}
	m, err := meta.Accessor(v)
	return err == nil && m.GetResourceVersion() != ""
}
