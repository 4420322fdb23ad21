package dashboard

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// secretType is the Go type of a Secret, which encodes without its kind
// unless its TypeMeta was set.
var secretType = reflect.TypeFor[corev1.Secret]()

// maxHoldDepth bounds the walk of holdsSecret; a value nested deeper is
// taken to hold a Secret (hiding errs on the safe side).
const maxHoldDepth = 32

// holdsSecret tells whether v holds a corev1.Secret anywhere: itself,
// through pointers, interfaces, slices, arrays, maps or struct fields.
func holdsSecret(v any) bool {
	return valueHolds(reflect.ValueOf(v), map[reflect.Type]bool{}, 0)
}

func valueHolds(v reflect.Value, mayHold map[reflect.Type]bool, depth int) bool {
	if !v.IsValid() {
		return false
	}
	if !typeMayHold(v.Type(), mayHold) {
		return false
	}
	if depth > maxHoldDepth || v.Type() == secretType {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && valueHolds(v.Elem(), mayHold, depth+1)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if valueHolds(v.Index(i), mayHold, depth+1) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if valueHolds(it.Value(), mayHold, depth+1) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if valueHolds(v.Field(i), mayHold, depth+1) {
				return true
			}
		}
	}
	return false
}

// typeMayHold tells whether a value of type t may hold a Secret: t is the
// Secret type, an interface, or is built of such a type. The answers are
// kept in memo. A type met again while it is being looked at (a recursive
// type) is taken as one that may: a "no" would be cached for the types
// that contain it before its own answer is known.
func typeMayHold(t reflect.Type, memo map[reflect.Type]bool) bool {
	if r, ok := memo[t]; ok {
		return r
	}
	memo[t] = true
	r := false
	switch t.Kind() {
	case reflect.Interface:
		r = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		r = typeMayHold(t.Elem(), memo)
	case reflect.Map:
		r = typeMayHold(t.Elem(), memo)
	case reflect.Struct:
		r = t == secretType
		for i := 0; !r && i < t.NumField(); i++ {
			r = typeMayHold(t.Field(i).Type, memo)
		}
	}
	memo[t] = r
	return r
}
