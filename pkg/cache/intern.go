package cache

import (
	"reflect"
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interning: decoders give every string of every object an allocation of
// its own, and the objects of a kind repeat most of their strings (the
// Pods of one Deployment share their images, env variables, mount paths,
// label keys and values, probe paths, tolerations...). With
// Options.InternStrings, the objects an informer stores share one copy of
// each string seen before.
// Strings cannot be changed in Go, so sharing them is invisible to readers:
// a handler that changes a field of its object replaces the field's string,
// never another object's; maps and slices stay each object's own.
const (
	// maxInterned bounds the strings an informer's table holds: strings
	// unique to one object (names, UIDs, IPs) fill it too, and the table
	// keeps what it holds alive after the objects are gone.
	maxInterned = 1 << 15
	// maxInternedLen leaves long strings (configuration held in
	// ConfigMaps, JSON annotations) each object's own: they are rarely
	// repeated outside benchmarks, and would make the table hold megabytes.
	maxInternedLen = 128
	// maxInternDepth bounds the walk on objects nested without end.
	maxInternDepth = 64
)

// interner is one informer's table of shared strings. Once a string is in
// the table it stays, and a string is only replaced by the table's copy of
// it: an object interned once is never written again when client-go hands
// it to the transform again (resyncs, Replace), while handlers read it. Its
// string either is the table's copy, or was not taken into the table when
// the object was interned (too long, or the table full, and it stays full).
type interner struct {
	mu    sync.Mutex
	table map[string]string
	limit int // how many strings table may hold
	// types says, per type, whether its values can hold a string the walk
	// can replace, so that the walk skips the rest (times, quantities,
	// numbers).
	types map[reflect.Type]bool
	// fields lists, per struct type, the fields the walk visits.
	fields map[reflect.Type][]int
}

// ownField says whether a field of ObjectMeta is each object's own (its
// name, UID and resourceVersion): in the table such strings would only
// fill it, and stay alive after their objects.
func ownField(name string) bool {
	return name == "Name" || name == "UID" || name == "ResourceVersion"
}

// ownKey says the same of a key of a map (unstructured objects' metadata;
// a map of another kind with such a key keeps that value its own, which
// costs nothing but a string not shared).
func ownKey(key string) bool {
	return key == "name" || key == "uid" || key == "resourceVersion"
}

// newInterner returns an empty table that takes up to limit strings.
func newInterner(limit int) *interner {
	return &interner{table: map[string]string{}, limit: limit, types: map[reflect.Type]bool{},
		fields: map[reflect.Type][]int{}}
}

// transform makes obj's strings share the table's copies; obj is returned
// as it is, changed in place. Objects that are not pointers pass unchanged.
// A nil interner does nothing.
func (in *interner) transform(obj any) (any, error) {
	if in == nil {
		return obj, nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.walk(v.Elem(), 0)
	return obj, nil
}

// walk interns the strings of v, which must be settable where it holds
// strings (an element of a pointer, a slice, or an exported field of one).
func (in *interner) walk(v reflect.Value, depth int) {
	if depth > maxInternDepth || !in.holdsStrings(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if c, ok := in.shared(s); ok {
				v.SetString(c)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			in.walk(v.Elem(), depth+1)
		}
	case reflect.Interface:
		in.walkInterface(v, depth)
	case reflect.Struct:
		for _, i := range in.fieldsOf(v.Type()) {
			in.walk(v.Field(i), depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			in.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		in.walkMap(v, depth)
	}
}

// walkInterface interns a string held in an interface (unstructured
// objects' values), or walks what the interface holds.
func (in *interner) walkInterface(v reflect.Value, depth int) {
	if v.IsNil() {
		return
	}
	e := v.Elem()
	if e.Kind() == reflect.String {
		if c, ok := in.shared(e.String()); ok && v.CanSet() {
			v.Set(reflect.ValueOf(c).Convert(e.Type()))
		}
		return
	}
	// A struct or an array held in an interface cannot be written; maps,
	// pointers and slices can be written through.
	in.walk(e, depth+1)
}

// walkMap interns a map's string values and walks values that can be
// written through (pointers, slices, maps, interfaces' maps). Keys stay as
// they are: replacing one means deleting and adding the entry, which
// leaves the map larger than it was (measured: more than the keys save).
func (in *interner) walkMap(m reflect.Value, depth int) {
	t := m.Type()
	for it := m.MapRange(); it.Next(); {
		k, val := it.Key(), it.Value()
		if k.Kind() == reflect.String && ownKey(k.String()) {
			continue
		}
		switch val.Kind() {
		case reflect.String:
			if c, ok := in.shared(val.String()); ok {
				m.SetMapIndex(k, reflect.ValueOf(c).Convert(t.Elem()))
			}
		case reflect.Interface:
			if !val.IsNil() && val.Elem().Kind() == reflect.String {
				if c, ok := in.shared(val.Elem().String()); ok {
					m.SetMapIndex(k, reflect.ValueOf(c).Convert(val.Elem().Type()))
				}
			} else if !val.IsNil() {
				in.walk(val.Elem(), depth+1)
			}
		case reflect.Pointer, reflect.Slice, reflect.Map:
			in.walk(val, depth+1)
		}
	}
}

// fieldsOf returns the fields of struct type t the walk visits: exported
// ones that can hold strings, but for ObjectMeta's ownFields.
func (in *interner) fieldsOf(t reflect.Type) []int {
	if f, ok := in.fields[t]; ok {
		return f
	}
	var f []int
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.IsExported() && in.holdsStrings(sf.Type) && !(t == reflect.TypeFor[metav1.ObjectMeta]() && ownField(sf.Name)) {
			f = append(f, i)
		}
	}
	in.fields[t] = f
	return f
}

// shared returns the table's copy of s and true when s must be replaced
// by it: s is not that copy. A string not in the table is taken into it,
// unless it is empty, too long, or the table is full.
func (in *interner) shared(s string) (string, bool) {
	if s == "" || len(s) > maxInternedLen {
		return "", false
	}
	c, ok := in.table[s]
	if !ok {
		if len(in.table) < in.limit {
			in.table[s] = s
		}
		return "", false
	}
	return c, unsafe.StringData(c) != unsafe.StringData(s)
}

// holdsStrings says whether a value of type t can hold a string that the
// walk can replace: through exported fields, elements, pointers, map keys
// and values, and interfaces (which can hold anything).
func (in *interner) holdsStrings(t reflect.Type) bool {
	if h, ok := in.types[t]; ok {
		return h
	}
	// A type that refers to itself is taken to hold nothing until its
	// other parts say otherwise; types met while working that out may be
	// taken to hold nothing, and then keep their strings: never wrong,
	// only less shared.
	in.types[t] = false
	h := false
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		h = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		h = in.holdsStrings(t.Elem())
	case reflect.Map:
		h = in.holdsStrings(t.Key()) || in.holdsStrings(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && in.holdsStrings(f.Type) {
				h = true
				break
			}
		}
	}
	in.types[t] = h
	return h
}
