package kubedescriptor

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// This file judges drift by what the descriptor's field manager owns.
//
// A live object differs from the desired one in ways that are no drift: the
// server fills in defaults (a Service port's targetPort sent as 0 is stored as
// the port), and other field managers add fields (an injected env entry, an
// annotation). It can also drift in ways a comparison of the desired object
// with the live one cannot see: a zero value the JSON leaves out or a typed
// object cannot tell from unset (`suspend: false` changed to true).
//
// So the reference is what the server made of the descriptor's own apply:
// after every apply (or, for objects found after a restart, a server-side dry
// run of it) the descriptor keeps the fields its manager owns afterwards (the
// managedFields entry of its Apply) and their values. A live object has
// drifted when it holds other values in those fields; fields other managers
// own are not looked at.
//
// structured-merge-diff could walk the owned set with the kind's schema; the
// FieldsV1 set alone is enough here, because its path elements carry what is
// needed to find list elements: the key fields ("k:"), the value ("v:") or
// the index ("i:"). That keeps CRDs and built-in kinds on one path without
// fetching OpenAPI schemas.

// appliedState is what the server held right after the descriptor applied a
// value.
type appliedState struct {
	uid   types.UID
	value any            // the desired value that was applied
	owned map[string]any // FieldsV1 of the field manager's Apply entry
	proj  map[string]any // the stored object restricted to owned
	// noRecordAt, when set, marks a state without an apply: a dry run
	// could not stand in for one for the live object at this
	// resourceVersion, so it is not asked again until the object changes
	// (see actualValue).
	noRecordAt string
	// syncedAt is the last resourceVersion at which the object was known
	// to hold what applying value stores (the apply's own, or one a dry
	// run confirmed); driftedAt, one at which a dry run found it would
	// not (see outside.go).
	syncedAt, driftedAt string
}

// appliedStates is a descriptor's memory of its applies, by key.
type appliedStates struct {
	mu     sync.Mutex
	states map[string]*appliedState
}

func (a *appliedStates) get(key string) *appliedState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.states[key]
}

func (a *appliedStates) put(key string, st *appliedState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st == nil {
		delete(a.states, key)
		return
	}
	if a.states == nil {
		a.states = map[string]*appliedState{}
	}
	a.states[key] = st
}

// newAppliedState records result, the object the server returned for an
// apply (or dry run) of value. It returns nil when result carries no Apply
// entry of fieldManager.
func newAppliedState(result runtime.Object, value any, fieldManager string) *appliedState {
	owned := ownedFields(result, fieldManager)
	if owned == nil {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(result)
	if err != nil {
		return nil
	}
	acc, err := meta.Accessor(result)
	if err != nil {
		return nil
	}
	proj, _ := project(m, owned).(map[string]any)
	return &appliedState{uid: acc.GetUID(), value: value, owned: owned, proj: proj}
}

// ownedFields returns the FieldsV1 set of fieldManager's Apply entry (not of
// a subresource), or nil.
func ownedFields(obj runtime.Object, fieldManager string) map[string]any {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	for _, e := range m.GetManagedFields() {
		if e.Manager != fieldManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var owned map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &owned) != nil {
			return nil
		}
		return owned
	}
	return nil
}

// drifted tells whether live holds other values than st in the fields st
// owns.
func (st *appliedState) drifted(live runtime.Object) bool {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return true
	}
	proj, _ := project(m, st.owned).(map[string]any)
	return !sameOwned(st.proj, proj, st.owned)
}

// project restricts v to the owned set: maps to their owned fields, lists to
// their owned elements (in v's order), leaves as they are.
func project(v any, owned map[string]any) any {
	members := withoutSelf(owned)
	if len(members) == 0 || v == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(members))
		for k, sub := range members {
			if name, ok := strings.CutPrefix(k, "f:"); ok {
				if fv, ok := x[name]; ok {
					out[name] = project(fv, asSet(sub))
				}
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(members))
		for i, elem := range x {
			key, sub := elementKey(members, elem, i)
			if key == "" {
				continue
			}
			p := project(elem, sub)
			// The element's key fields stay, owned or not (a defaulted
			// port protocol), so that the projection can be matched.
			if pm, ok := p.(map[string]any); ok && strings.HasPrefix(key, "k:") {
				var fields map[string]any
				if json.Unmarshal([]byte(key[2:]), &fields) == nil {
					for f := range fields {
						if v, ok := elem.(map[string]any)[f]; ok {
							pm[f] = v
						}
					}
				}
			}
			out = append(out, p)
		}
		return out
	}
	return v
}

// sameOwned compares two projections under their owned set. A leaf that was
// an empty map or list when applied is owned by its presence: what other
// managers put into it is theirs.
func sameOwned(applied, live any, owned map[string]any) bool {
	members := withoutSelf(owned)
	if len(members) == 0 {
		switch a := applied.(type) {
		case map[string]any:
			if len(a) == 0 {
				_, ok := live.(map[string]any)
				return ok
			}
		case []any:
			if len(a) == 0 {
				_, ok := live.([]any)
				return ok
			}
		}
		return jsonEqual(applied, live)
	}
	switch a := applied.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, sub := range members {
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			av, inA := a[name]
			lv, inL := l[name]
			if inA != inL || inA && !sameOwned(av, lv, asSet(sub)) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(a) {
			return false
		}
		for i, elem := range a {
			key, sub := elementKey(members, elem, i)
			match, ok := findElement(l, key)
			if key == "" || !ok || !sameOwned(elem, match, sub) {
				return false
			}
		}
		return true
	}
	return jsonEqual(applied, live)
}

// elementKey returns the owned path element naming elem (at index i) and its
// owned set, or "" when elem is not owned.
func elementKey(members map[string]any, elem any, i int) (string, map[string]any) {
	for key, sub := range members {
		switch {
		case strings.HasPrefix(key, "k:"):
			var fields map[string]any
			em, ok := elem.(map[string]any)
			if ok && json.Unmarshal([]byte(key[2:]), &fields) == nil && keyMatches(fields, em) {
				return key, asSet(sub)
			}
		case strings.HasPrefix(key, "v:"):
			var v any
			if json.Unmarshal([]byte(key[2:]), &v) == nil && jsonEqual(v, elem) {
				return key, asSet(sub)
			}
		case key == "i:"+strconv.Itoa(i):
			return key, asSet(sub)
		}
	}
	return "", nil
}

// findElement returns the element of list a path element names.
func findElement(list []any, key string) (any, bool) {
	for i, elem := range list {
		if k, _ := elementKey(map[string]any{key: nil}, elem, i); k != "" {
			return elem, true
		}
	}
	return nil, false
}

// keyMatches tells whether elem has the key fields' values.
func keyMatches(fields, elem map[string]any) bool {
	for f, v := range fields {
		if ev, ok := elem[f]; !ok || !jsonEqual(v, ev) {
			return false
		}
	}
	return true
}

func asSet(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// withoutSelf drops the "." member, which marks ownership of a list element
// or map entry itself.
func withoutSelf(owned map[string]any) map[string]any {
	if _, ok := owned["."]; !ok {
		return owned
	}
	out := make(map[string]any, len(owned))
	for k, v := range owned {
		if k != "." {
			out[k] = v
		}
	}
	return out
}

// jsonEqual compares two JSON values exactly, numbers by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return scalarEqual(a, b)
}

// OwnedProjection returns obj (an object read from the API server with its
// managedFields, which the lean cache strips) restricted to the fields
// fieldManager's Apply entry owns, with its name and namespace, and with
// gvk's apiVersion and kind. Applied again with fieldManager it changes
// nothing: it sets what the manager owns to what it holds, and leaves the
// fields other managers own alone. ok is false when obj carries no Apply
// entry of fieldManager (nothing to project onto: the whole object would
// be taken).
func OwnedProjection(obj runtime.Object, gvk schema.GroupVersionKind, fieldManager string) (u *unstructured.Unstructured, ok bool, err error) {
	owned := ownedFields(obj, fieldManager)
	if owned == nil {
		return nil, false, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false, err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, err
	}
	proj, _ := project(m, owned).(map[string]any)
	if proj == nil {
		proj = map[string]any{}
	}
	u = &unstructured.Unstructured{Object: proj}
	u.SetGroupVersionKind(gvk)
	u.SetName(acc.GetName())
	u.SetNamespace(acc.GetNamespace())
	return u, true, nil
}
