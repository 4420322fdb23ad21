// Package jsonpatch builds JSON patches (RFC 6902) from operations, for the
// packages that write finalizers with test-guarded patches (generic's
// OnRemove handlers and finalizer.Clean).
package jsonpatch

import "encoding/json"

// Op is one operation of a JSON patch. Value is written for every operation
// but "remove", which must not carry one; a nil Value is written as null,
// which a "test" compares against an absent key too.
type Op struct {
	Op    string
	Path  string
	Value any
}

// Test builds a "test" operation: the patch fails unless path holds value.
func Test(path string, value any) Op { return Op{Op: "test", Path: path, Value: value} }

// Add builds an "add" operation of value at path.
func Add(path string, value any) Op { return Op{Op: "add", Path: path, Value: value} }

// Replace builds a "replace" operation of the value at path.
func Replace(path string, value any) Op { return Op{Op: "replace", Path: path, Value: value} }

// Remove builds a "remove" operation of the value at path.
func Remove(path string) Op { return Op{Op: "remove", Path: path} }

// MarshalJSON writes op, path and (but for "remove") value, in that order.
func (o Op) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Marshal is the patch of ops.
func Marshal(ops ...Op) ([]byte, error) { return json.Marshal(ops) }
