package leader

import (
	"bytes"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of a Kubernetes ObjectMeta in protobuf that the stamp
// touches: maps of string entries (key 1, value 2).
const (
	metaLabels      protowire.Number = 11
	metaAnnotations protowire.Number = 12
)

// objectMeta returns the ObjectMeta of a Kubernetes protobuf body: a
// runtime.Unknown envelope (raw = field 2) whose object has its
// ObjectMeta as field 1 (true of every built-in kind).
func objectMeta(body []byte) []byte {
	return protoField(protoField(body[len(protobufMagic):], 2), 1)
}

// protobufStamp stamps a Kubernetes protobuf body: the ObjectMeta's
// entries of any stamp are dropped, and the labels of st appended. A body
// that is not a protobuf envelope of an object with its ObjectMeta as
// field 1 (every built-in kind) is an error: it is never sent unstamped.
func protobufStamp(body []byte, st stamp) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, errors.New("no Kubernetes protobuf envelope")
	}
	env := body[len(protobufMagic):]
	raw := protoField(env, 2)
	if raw == nil {
		return nil, errors.New("the protobuf envelope holds no object")
	}
	meta, ok := dropStampEntries(protoField(raw, 1))
	if !ok {
		return nil, errors.New("the object's metadata does not parse")
	}
	meta = appendMapEntry(meta, metaLabels, TermLeaseLabel, st.lease)
	meta = appendMapEntry(meta, metaLabels, TermIDLabel, st.id)
	if st.user != "" {
		meta = appendMapEntry(meta, metaLabels, TermUserLabel, st.user)
	}
	newRaw, ok := replaceField(raw, 1, meta)
	if !ok {
		return nil, errors.New("the object does not parse")
	}
	newEnv, ok := replaceField(env, 2, newRaw)
	if !ok {
		return nil, errors.New("the protobuf envelope does not parse")
	}
	return append(append([]byte(nil), protobufMagic...), newEnv...), nil
}

// dropStampEntries returns a copy of the ObjectMeta meta without the
// entries of any stamp; ok is false if meta does not parse.
func dropStampEntries(meta []byte) (out []byte, ok bool) {
	out = []byte{}
	for len(meta) > 0 {
		n, typ, l := protowire.ConsumeTag(meta)
		if l < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(n, typ, meta[l:])
		if m < 0 {
			return nil, false
		}
		drop := false
		if (n == metaLabels || n == metaAnnotations) && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(meta[l:])
			key := string(protoField(entry, 1))
			drop = n == metaLabels && stampLabels[key] || n == metaAnnotations && stampAnnotations[key]
		}
		if !drop {
			out = append(out, meta[:l+m]...)
		}
		meta = meta[l+m:]
	}
	return out, true
}

// appendMapEntry appends the entry key: value of the map field num.
func appendMapEntry(b []byte, num protowire.Number, key, value string) []byte {
	var entry []byte
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, key)
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendString(entry, value)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, entry)
}

// replaceField returns message b with its length-delimited field num set
// to v: its occurrences dropped, v appended last. ok is false if b does
// not parse.
func replaceField(b []byte, num protowire.Number, v []byte) (out []byte, ok bool) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(n, typ, b[l:])
		if m < 0 {
			return nil, false
		}
		if n != num {
			out = append(out, b[:l+m]...)
		}
		b = b[l+m:]
	}
	out = protowire.AppendTag(out, num, protowire.BytesType)
	return protowire.AppendBytes(out, v), true
}
