package leader

import (
	"bytes"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Kubernetes protobuf bodies: the magic, then a runtime.Unknown envelope
// whose field 2 (raw) is the object. Lariat's clients send built-in kinds
// as protobuf, so a write's precondition must be set there too, or a
// delayed protobuf update or delete lands unconditionally.
const (
	envelopeRaw          protowire.Number = 2 // runtime.Unknown.raw
	objectMetadata       protowire.Number = 1 // every built-in kind's metadata
	metaResourceVersion  protowire.Number = 6 // ObjectMeta.resourceVersion
	deletePreconditions  protowire.Number = 2 // DeleteOptions.preconditions
	preconditionsVersion protowire.Number = 2 // Preconditions.resourceVersion
	evictionDeleteOpts   protowire.Number = 2 // policy/v1 Eviction.deleteOptions
)

// protobufObjectPrecondition sets metadata.resourceVersion in a protobuf
// object body (an update or a binding) whose metadata has none of its own
// (own: see withPrecondition), and returns the body unchanged if it is no
// protobuf object or carries a version of its own.
func protobufObjectPrecondition(body []byte, resourceVersion string, own func(rv string) bool) []byte {
	keep := func(cur []byte) bool { return own(string(cur)) }
	return protobufNested(body, resourceVersion, keep, objectMetadata, metaResourceVersion)
}

// protobufDeletePrecondition sets preconditions.resourceVersion in
// protobuf DeleteOptions that have none.
func protobufDeletePrecondition(body []byte, resourceVersion string) []byte {
	return protobufNested(body, resourceVersion, nonEmpty, deletePreconditions, preconditionsVersion)
}

// protobufEvictionPrecondition sets deleteOptions.preconditions.resourceVersion
// in a protobuf Eviction whose delete options have none.
func protobufEvictionPrecondition(body []byte, resourceVersion string) []byte {
	return protobufNested(body, resourceVersion, nonEmpty, evictionDeleteOpts, deletePreconditions, preconditionsVersion)
}

// nonEmpty keeps a delete's own precondition, any non-empty one: the API
// server compares it with the object's version as a string, so even "0"
// is a precondition (one that fails).
func nonEmpty(cur []byte) bool { return len(cur) > 0 }

// protobufNested sets the string field at path (message fields, then the
// string leaf) of the enveloped message in body to value, unless keep
// says the value it has is its own. Messages missing on the way are added.
func protobufNested(body []byte, value string, keep func(cur []byte) bool, path ...protowire.Number) []byte {
	if !bytes.HasPrefix(body, protobufMagic) || len(path) == 0 {
		return body
	}
	env := body[len(protobufMagic):]
	raw, ok := protoBytes(env, envelopeRaw)
	if !ok {
		return body
	}
	// msgs[i] is the message holding path[i]: msgs[0] the object.
	msgs := [][]byte{raw}
	for _, num := range path[:len(path)-1] {
		m, _ := protoBytes(msgs[len(msgs)-1], num) // absent: an empty message
		msgs = append(msgs, m)
	}
	if cur, _ := protoBytes(msgs[len(msgs)-1], path[len(path)-1]); keep(cur) {
		return body
	}
	v := []byte(value)
	for i := len(path) - 1; i >= 0; i-- {
		v = withField(msgs[i], path[i], v)
	}
	env = withField(env, envelopeRaw, v)
	return append(slices.Clone(protobufMagic), env...)
}

// protoBytes returns the last length-delimited field num of message b (the
// value protobuf decoding keeps), and whether b parsed.
func protoBytes(b []byte, num protowire.Number) (v []byte, ok bool) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false
		}
		b = b[l:]
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, false
		}
		if n == num && typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(b[:l])
		}
		b = b[l:]
	}
	return v, true
}

// withField returns message b with every field num dropped and num set to
// the length-delimited value v (at the end: protobuf reads fields in any
// order).
func withField(b []byte, num protowire.Number, v []byte) []byte {
	out := make([]byte, 0, len(b)+len(v)+8)
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(n, typ, b[l:])
		if m < 0 {
			return b
		}
		if n != num {
			out = append(out, b[:l+m]...)
		}
		b = b[l+m:]
	}
	out = protowire.AppendTag(out, num, protowire.BytesType)
	return protowire.AppendBytes(out, v)
}
