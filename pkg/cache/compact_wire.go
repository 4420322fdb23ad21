package cache

import (
	"bytes"
	"reflect"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
)

// A compact informer reads the objects of its watch
// events (the watch-list's initial events included) from the wire bytes:
// it keeps the object's bytes minus its managedFields, and reads of them only
// the namespace, name, resourceVersion and labels it keeps beside them. It
// spares a decode of the whole object (managedFields included) and an encode
// of it again, per object; the one full decode happens when it is read, as
// for every compact object. Everything it does not recognize (a Status, a
// bookmark, another kind, bytes it cannot read) is decoded as client-go
// decodes it, and stored through the informer's transform as before.

// protobufMagic starts every object apimachinery's protobuf serializer
// writes, followed by a runtime.Unknown.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// Field numbers of the messages read (k8s.io/apimachinery generated.proto).
const (
	unknownTypeMeta        = 1 // runtime.Unknown
	unknownRaw             = 2
	unknownContentEncoding = 3
	typeMetaAPIVersion     = 1 // runtime.TypeMeta
	typeMetaKind           = 2
	objectMetadata         = 1 // every built-in kind: metadata is field 1
	metaName               = 1 // metav1.ObjectMeta
	metaNamespace          = 3
	metaResourceVersion    = 6
	metaLabels             = 11
	metaManagedFields      = 17
	mapKey                 = 1 // a map entry
	mapValue               = 2
)

// wireObject is what the wire decoder hands client-go for an object of the
// kind: a compact object, which the informer's transform unwraps (the store
// keeps *compactObject only). It implements runtime.Object and, through
// compactMeta, metav1.Object, which is all the reflector and the key
// functions read.
type wireObject struct {
	*compactObject
}

// GetObjectKind returns the object itself: the kind stamped on it is kept,
// interned, as the compact object's.
func (w *wireObject) GetObjectKind() schema.ObjectKind { return w }

// SetGroupVersionKind keeps gvk as the compact object's kind.
func (w *wireObject) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	w.gvk = w.codec.intern(gvk)
}

// GroupVersionKind returns the kind stamped on the object, if any.
func (w *wireObject) GroupVersionKind() schema.GroupVersionKind {
	if w.gvk == nil {
		return schema.GroupVersionKind{}
	}
	return *w.gvk
}

// DeepCopyObject returns a copy; its encoded form and labels are shared:
// nothing writes to them.
func (w *wireObject) DeepCopyObject() runtime.Object {
	o := &compactObject{compactMeta: w.compactMeta, gvk: w.gvk, data: w.data, codec: w.codec, packed: w.packed}
	return &wireObject{o}
}

// wireDecoder decodes objects of its codec's kind from protobuf into
// wireObjects, and everything else through inner.
type wireDecoder struct {
	inner      runtime.Decoder
	codec      *codec
	apiVersion string
	kind       string
}

// Decode returns a wireObject for an object of the kind decoded into
// nothing in particular (as a watch event's object is), in protobuf for a
// protobuf kind, in JSON for the others; inner's answer otherwise.
func (d wireDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if l, ok := into.(*wireList); ok {
		return d.decodeList(data, defaults, l) // compact_wire_list.go
	}
	if into == nil {
		var o *compactObject
		switch {
		case d.codec.proto && bytes.HasPrefix(data, protobufMagic):
			o = d.codec.fromWire(data[len(protobufMagic):], d.apiVersion, d.kind)
		case !d.codec.proto && len(data) > 0 && data[0] == '{':
			o = d.codec.fromWireJSON(data, d.apiVersion, d.kind) // compact_wire_json.go
		}
		if o != nil {
			return &wireObject{o}, &schema.GroupVersionKind{}, nil
		}
	}
	return d.inner.Decode(data, defaults, into)
}

// wireClients returns getClient's clients with decoders that read the
// codec's kind from the wire; each client is derived once.
func wireClients(getClient ClientFunc, c *codec) ClientFunc {
	var mu sync.Mutex
	var base, derived *client.Client
	return func() (*client.Client, error) {
		cl, err := getClient()
		if err != nil || c.wireOff.Load() {
			return cl, err
		}
		mu.Lock()
		defer mu.Unlock()
		if cl == base {
			return derived, nil
		}
		gvk := cl.GroupVersionKind()
		d, err := cl.WithDecoder(func(inner runtime.Decoder) runtime.Decoder {
			return wireDecoder{inner: inner, codec: c, apiVersion: gvk.GroupVersion().String(), kind: gvk.Kind}
		})
		if err != nil {
			return nil, err
		}
		base, derived = cl, d
		return d, nil
	}
}

// fromWire returns the compact object of unknown, a runtime.Unknown holding
// an object of the kind in protobuf, or nil when it is anything else, or
// has no name (a bookmark), or cannot be read.
func (c *codec) fromWire(unknown []byte, apiVersion, kind string) *compactObject {
	raw, ok := unknownRawOf(unknown, apiVersion, kind)
	if !ok {
		return nil
	}
	return c.fromRaw(raw)
}

// fromRaw returns the compact object of raw, an object of the codec's kind
// in protobuf (without the runtime.Unknown around it, as a list's items
// come), or nil when it has no name or cannot be read.
func (c *codec) fromRaw(raw []byte) *compactObject {
	lenAt, metaStart, metaEnd, ok := wireMetadataOf(raw)
	if !ok {
		return nil
	}
	out := &compactObject{codec: c}
	var labels map[string]string
	if labels, ok = readMeta(raw[metaStart:metaEnd], &out.compactMeta); !ok || out.Name == "" {
		return nil
	}
	return c.keepWire(out, labels, len(raw), func(dst []byte) []byte {
		return withoutManagedFields(dst, raw, lenAt, metaStart, metaEnd)
	})
}

// keepWire completes out, read from the wire, with the bytes strip appends
// to dst (the object's, without its managedFields; at most n), packed as
// the cache keeps them, and with its labels, shared.
func (c *codec) keepWire(out *compactObject, labels map[string]string, n int, strip func(dst []byte) []byte) *compactObject {
	buf, _ := c.encoded.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer c.encoded.Put(buf)
	buf.Reset()
	buf.Grow(n)
	out.data, out.packed = c.keepPacked(strip(buf.AvailableBuffer()))
	c.mu.Lock()
	out.Labels = c.labels.share(labels)
	c.mu.Unlock()
	c.wired.Add(1)
	return out
}

// unknownRawOf returns the object inside a runtime.Unknown when its type
// is apiVersion and kind and it is not encoded any further.
func unknownRawOf(b []byte, apiVersion, kind string) ([]byte, bool) {
	var raw []byte
	typed := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			return nil, false
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch num {
		case unknownTypeMeta:
			if typed || !isType(v, apiVersion, kind) {
				return nil, false
			}
			typed = true
		case unknownRaw:
			if raw != nil {
				return nil, false
			}
			raw = v
		case unknownContentEncoding:
			if len(v) > 0 {
				return nil, false
			}
		}
	}
	return raw, typed && raw != nil
}

// isType reports whether b, a runtime.TypeMeta, is apiVersion and kind.
func isType(b []byte, apiVersion, kind string) bool {
	var v, k string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return false
		}
		b = b[n:]
		s, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch num {
		case typeMetaAPIVersion:
			v = string(s)
		case typeMetaKind:
			k = string(s)
		}
	}
	return v == apiVersion && k == kind
}

// wireMetadataOf returns where the object's metadata (field 1, once) lies in raw:
// its length from lenAt, its bytes from start to end; false when raw cannot
// be read.
func wireMetadataOf(raw []byte) (lenAt, start, end int, ok bool) {
	found := false
	for off := 0; off < len(raw); {
		num, typ, n := protowire.ConsumeTag(raw[off:])
		if n < 0 {
			return 0, 0, 0, false
		}
		off += n
		if num == objectMetadata {
			v, m := protowire.ConsumeBytes(raw[off:])
			if typ != protowire.BytesType || m < 0 || found {
				return 0, 0, 0, false
			}
			lenAt, start, end, found = off, off+m-len(v), off+m, true
			off += m
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, raw[off:])
		if m < 0 {
			return 0, 0, 0, false
		}
		off += m
	}
	return lenAt, start, end, found
}

// readMeta reads the namespace, name, resourceVersion and labels of b, an
// ObjectMeta, into m, and returns the labels; false when b cannot be read.
func readMeta(b []byte, m *compactMeta) (map[string]string, bool) {
	var labels map[string]string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, false
		}
		field := b[:n]
		b = b[n:]
		if typ != protowire.BytesType {
			continue
		}
		v, _ := protowire.ConsumeBytes(field)
		switch num {
		case metaName:
			m.Name = string(v)
		case metaNamespace:
			m.Namespace = string(v)
		case metaResourceVersion:
			m.ResourceVersion = string(v)
		case metaLabels:
			k, val, ok := mapEntry(v)
			if !ok {
				return nil, false
			}
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = val
		}
	}
	return labels, true
}

// mapEntry reads a map<string, string> entry.
func mapEntry(b []byte) (key, value string, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return "", "", false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return "", "", false
		}
		b = b[n:]
		switch num {
		case mapKey:
			key = string(v)
		case mapValue:
			value = string(v)
		}
	}
	return key, value, true
}

// withoutManagedFields appends to dst raw with its metadata, raw[start:end]
// (its length at raw[lenAt:start]), written again without its managedFields
// entries.
func withoutManagedFields(dst, raw []byte, lenAt, start, end int) []byte {
	meta := raw[start:end]
	size := 0
	for b := meta; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num != metaManagedFields {
			size += n + m
		}
		b = b[n+m:]
	}
	dst = append(dst, raw[:lenAt]...)
	dst = protowire.AppendVarint(dst, uint64(size))
	for b := meta; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num != metaManagedFields {
			dst = append(dst, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return append(dst, raw[end:]...)
}

// readsWire reports whether a compact informer with these options reads its
// objects from the wire: for kinds whose transform would only drop
// managedFields, which the wire decoder drops itself. A user's transform,
// StripLastApplied, KeepAllMetadata and a stream of initial events handed to
// handlers early (which transforms objects itself) keep the decoded path.
func (o Options) readsWire() bool {
	return o.codec != nil && o.Transform == nil && !o.StripLastApplied &&
		!o.KeepAllMetadata && !o.StreamInitialList && o.meta == nil && o.interner == nil
}

// isStripMetadata reports whether fn is StripMetadata, compared by code as
// readsOnlyNamespace compares.
func isStripMetadata(fn cache.TransformFunc) bool {
	return reflect.ValueOf(fn).Pointer() == reflect.ValueOf(StripMetadata).Pointer()
}
