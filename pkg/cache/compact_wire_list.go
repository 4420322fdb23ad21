package cache

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A compact informer that reads its watch events from the wire reads its
// lists (each page of a list, when the server has no watch-list or the
// informer lists instead) from the wire too: the list response is read as
// far as its ListMeta and the bytes of each item, and each item is taken as
// a watch event's object is (fromWire, fromWireJSON). When one item is not
// taken, or the response is not a list of the kind, the whole response is
// decoded as before, into the informer's list type, whose items the list
// then holds.

// Field numbers of a list (every built-in kind's List) and its ListMeta.
const (
	listMetadata          = 1
	listItems             = 2
	listMetaRV            = 2
	listMetaContinue      = 3
	listMetaRemainingItem = 4
)

// wireList is what a wire informer lists into: wireObjects for the items
// read from the wire, the decoded items of example's type otherwise. The
// reflector and client-go's pager read any list whose Items are
// runtime.Objects.
type wireList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []runtime.Object `json:"items"`
	// example is the informer's list type, which a response not read from
	// the wire is decoded into.
	example runtime.Object
}

// DeepCopyObject returns a copy; wireObjects share their encoded form,
// which nothing writes to.
func (l *wireList) DeepCopyObject() runtime.Object {
	out := &wireList{TypeMeta: l.TypeMeta, example: l.example}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]runtime.Object, len(l.Items))
	for i, item := range l.Items {
		out.Items[i] = item.DeepCopyObject()
	}
	return out
}

// listInto returns what a list of the informer is decoded into: list, or
// a wireList around it when the client that lists (from wireClients, got
// before this call) reads from the wire. wireOff, once set, stays set: if
// it is not set now, it was not when the client was got.
func (o Options) listInto(list runtime.Object) runtime.Object {
	if o.wire && !o.codec.wireOff.Load() {
		return &wireList{example: list}
	}
	return list
}

// decodeList fills l from data, a list response: from the wire when every
// item is taken, through inner into l's example type otherwise. It returns
// what inner returns when that is not the list (a Status).
func (d wireDecoder) decodeList(data []byte, defaults *schema.GroupVersionKind, l *wireList) (runtime.Object, *schema.GroupVersionKind, error) {
	var items []runtime.Object
	var ok bool
	switch {
	case d.codec.proto && bytes.HasPrefix(data, protobufMagic):
		items, ok = d.codec.listFromWire(data[len(protobufMagic):], d.apiVersion, d.kind, &l.ListMeta)
	case !d.codec.proto && len(data) > 0 && data[0] == '{' && json.Valid(data):
		// Checked first: unlike a watch event's object, which client-go
		// parsed whole with its event, a list's body comes as it was sent,
		// and the reader does not check the values it skips.
		items, ok = d.codec.listFromWireJSON(data, d.apiVersion, d.kind, &l.ListMeta)
	}
	if ok {
		l.Items = items
		return l, &schema.GroupVersionKind{}, nil
	}
	l.ListMeta = metav1.ListMeta{}
	decoded := l.example.DeepCopyObject()
	out, gvk, err := d.inner.Decode(data, defaults, decoded)
	if err != nil || out != decoded {
		return out, gvk, err
	}
	lm, err := meta.ListAccessor(decoded)
	if err != nil {
		return nil, gvk, err
	}
	l.ResourceVersion, l.Continue, l.RemainingItemCount = lm.GetResourceVersion(), lm.GetContinue(), lm.GetRemainingItemCount()
	if l.Items, err = meta.ExtractList(decoded); err != nil {
		return nil, gvk, err
	}
	return l, gvk, nil
}

// listFromWire reads a list of the kind in protobuf (a runtime.Unknown
// holding a List): its ListMeta into lm and every item; false when it is
// anything else or one item is not taken.
func (c *codec) listFromWire(unknown []byte, apiVersion, kind string, lm *metav1.ListMeta) ([]runtime.Object, bool) {
	raw, ok := unknownRawOf(unknown, apiVersion, kind+"List")
	if !ok {
		return nil, false
	}
	var items []runtime.Object
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 || typ != protowire.BytesType || (num != listMetadata && num != listItems) {
			return nil, false
		}
		raw = raw[n:]
		v, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return nil, false
		}
		raw = raw[n:]
		if num == listMetadata {
			if !readListMeta(v, lm) {
				return nil, false
			}
			continue
		}
		o := c.fromRaw(v)
		if o == nil {
			return nil, false
		}
		items = append(items, &wireObject{o})
	}
	return items, true
}

// readListMeta reads b, a ListMeta in protobuf, into lm.
func readListMeta(b []byte, lm *metav1.ListMeta) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return false
		}
		field := b[:n]
		b = b[n:]
		switch {
		case num == listMetaRV && typ == protowire.BytesType:
			v, _ := protowire.ConsumeBytes(field)
			lm.ResourceVersion = string(v)
		case num == listMetaContinue && typ == protowire.BytesType:
			v, _ := protowire.ConsumeBytes(field)
			lm.Continue = string(v)
		case num == listMetaRemainingItem && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(field)
			count := int64(v)
			lm.RemainingItemCount = &count
		}
	}
	return true
}

// listFromWireJSON reads a list of the kind in JSON: its metadata into lm
// and every item; false when it is anything else, a key it reads is written
// twice, or one item is not taken.
func (c *codec) listFromWireJSON(data []byte, apiVersion, kind string, lm *metav1.ListMeta) ([]runtime.Object, bool) {
	var seen [4]bool
	var items []runtime.Object
	end, ok := jsonObject(data, skipSpace(data, 0), func(m jsonMember) bool {
		k := listKey(m.key)
		if k < 0 {
			return !strings.EqualFold(m.key, "apiVersion") && !strings.EqualFold(m.key, "kind") &&
				!strings.EqualFold(m.key, "metadata") && !strings.EqualFold(m.key, "items")
		}
		if seenTwice(&seen[k]) {
			return false
		}
		value := data[m.valStart:m.end]
		switch m.key {
		case "apiVersion":
			v, isString := jsonString(value)
			return isString && v == apiVersion
		case "kind":
			v, isString := jsonString(value)
			return isString && v == kind+"List"
		case "metadata":
			return jsonListMeta(data[:m.end], m.valStart, lm)
		}
		var read bool
		items, read = c.jsonItems(data[:m.end], m.valStart, apiVersion, kind)
		return read
	})
	if !ok || skipSpace(data, end) != len(data) || !seen[0] || !seen[1] {
		return nil, false
	}
	return items, true
}

// listKey numbers the members of a list the reader reads; -1 for others.
func listKey(key string) int {
	switch key {
	case "apiVersion":
		return 0
	case "kind":
		return 1
	case "metadata":
		return 2
	case "items":
		return 3
	}
	return -1
}

// jsonListMeta reads the list's metadata object at data[at] into lm.
func jsonListMeta(data []byte, at int, lm *metav1.ListMeta) bool {
	var seen [3]bool
	_, ok := jsonObject(data, at, func(m jsonMember) bool {
		value := data[m.valStart:m.end]
		var isString bool
		switch m.key {
		case "resourceVersion":
			lm.ResourceVersion, isString = jsonString(value)
			return isString && !seenTwice(&seen[0])
		case "continue":
			lm.Continue, isString = jsonString(value)
			return isString && !seenTwice(&seen[1])
		case "remainingItemCount":
			if seenTwice(&seen[2]) {
				return false
			}
			if string(value) == "null" {
				lm.RemainingItemCount = nil
				return true
			}
			count, err := strconv.ParseInt(string(value), 10, 64)
			lm.RemainingItemCount = &count
			return err == nil
		}
		return true
	})
	return ok
}

// seenTwice marks *seen and reports whether it was marked already.
func seenTwice(seen *bool) bool {
	was := *seen
	*seen = true
	return was
}

// jsonItems reads the array of items at data[at] (null is none); false
// when one is not taken.
func (c *codec) jsonItems(data []byte, at int, apiVersion, kind string) ([]runtime.Object, bool) {
	if bytes.HasPrefix(data[at:], []byte("null")) {
		return nil, true
	}
	if data[at] != '[' {
		return nil, false
	}
	var items []runtime.Object
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == ']' {
		return nil, true
	}
	// client-go's decode of a list clears the list's type only: its items
	// keep the apiVersion and kind they carry, which a typed object's
	// decode on read (compactObject.decode) would otherwise clear. Each
	// item taken carries exactly these (fromWireJSON checks them).
	gvk := c.intern(schema.FromAPIVersionAndKind(apiVersion, kind))
	for i < len(data) {
		end, ok := skipValue(data, i)
		if !ok {
			return nil, false
		}
		o := c.fromWireJSON(data[i:end], apiVersion, kind)
		if o == nil {
			return nil, false
		}
		o.gvk = gvk
		items = append(items, &wireObject{o})
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ']':
			return items, true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}
