package cache

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// A compact informer of a JSON kind (a custom resource, typed or
// unstructured) reads the objects of its watch events from the wire bytes
// too: it reads the top level and the metadata of the object's JSON without
// decoding the rest, cuts the member "managedFields" out of the metadata,
// and keeps the remaining bytes as the server wrote them. Decoding those
// bytes on read (compactObject.decode, the decoder client-go's serializer
// uses) gives what decoding the whole object and dropping its
// managedFields gives.
//
// Only objects whose reading leaves no doubt are taken; the decoder client-go
// uses reads the others as before (fromWireJSON returns nil): another kind
// or apiVersion, no name (a bookmark), a key the decoders could read
// differently from this reader (written twice among the members it reads,
// or "apiVersion", "kind", "metadata" in another case, which the JSON
// serializer's kind detection matches without regard to case), a
// top-level "items" (the unstructured decoder makes a list of it), a value
// of an unexpected type, or bytes it cannot follow. The object's bytes come
// out of a watch event that client-go's decoder has parsed whole, so they
// are valid JSON; this reader does not check the values it skips.

// jsonMember is a member of a JSON object: its key (unquoted) and where its
// key starts, its value starts and its value ends in the bytes read.
type jsonMember struct {
	key                  string
	start, valStart, end int
}

// fromWireJSON returns the compact object of data, a JSON object of the
// kind, or nil when it is anything else or is not read (see above).
func (c *codec) fromWireJSON(data []byte, apiVersion, kind string) *compactObject {
	metaStart, metaEnd, ok := jsonTopLevel(data, apiVersion, kind)
	if !ok {
		return nil
	}
	out := &compactObject{codec: c}
	labels, cut, ok := jsonReadMeta(data, metaStart, metaEnd, &out.compactMeta)
	if !ok || out.Name == "" {
		return nil
	}
	return c.keepWire(out, labels, len(data), func(dst []byte) []byte {
		return append(append(dst, data[:cut[0]]...), data[cut[1]:]...)
	})
}

// jsonTopLevel returns where the metadata object of data lies, when data is
// an object of apiVersion and kind that the reader takes.
func jsonTopLevel(data []byte, apiVersion, kind string) (metaStart, metaEnd int, ok bool) {
	var seenVersion, seenKind, seenMeta bool
	end, ok := jsonObject(data, skipSpace(data, 0), func(m jsonMember) bool {
		switch m.key {
		case "apiVersion":
			v, isString := jsonString(data[m.valStart:m.end])
			taken := isString && !seenVersion && v == apiVersion
			seenVersion = true
			return taken
		case "kind":
			v, isString := jsonString(data[m.valStart:m.end])
			taken := isString && !seenKind && v == kind
			seenKind = true
			return taken
		case "metadata":
			taken := !seenMeta && data[m.valStart] == '{'
			seenMeta, metaStart, metaEnd = true, m.valStart, m.end
			return taken
		case "items":
			return false
		}
		return !strings.EqualFold(m.key, "apiVersion") && !strings.EqualFold(m.key, "kind") &&
			!strings.EqualFold(m.key, "metadata")
	})
	if !ok || skipSpace(data, end) != len(data) {
		return 0, 0, false
	}
	return metaStart, metaEnd, seenVersion && seenKind && seenMeta
}

// metaKey numbers the metadata members the reader reads or cuts; -1 for
// the others. One of them written twice is not taken: the decoders keep the
// last (typed ones merge objects), and the reader would have to as well.
func metaKey(key string) int {
	switch key {
	case "name":
		return 0
	case "namespace":
		return 1
	case "resourceVersion":
		return 2
	case "labels":
		return 3
	case "managedFields":
		return 4
	}
	return -1
}

// jsonReadMeta reads the namespace, name, resourceVersion and labels of the
// metadata object data[start:end] into m, returns the labels and the span
// of data to cut to drop its managedFields (empty when it has none).
func jsonReadMeta(data []byte, start, end int, m *compactMeta) (labels map[string]string, cut [2]int, ok bool) {
	var seen [5]bool
	var prev, managed jsonMember
	found, last := false, false
	_, ok = jsonObject(data[:end], start, func(f jsonMember) bool {
		if found && !last {
			// The member after managedFields: cut up to its key.
			cut, last = [2]int{managed.start, f.start}, true
		}
		defer func() { prev = f }()
		k := metaKey(f.key)
		if k < 0 {
			return true
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		value := data[f.valStart:f.end]
		var read bool
		switch f.key {
		case "name":
			m.Name, read = jsonString(value)
		case "namespace":
			m.Namespace, read = jsonString(value)
		case "resourceVersion":
			m.ResourceVersion, read = jsonString(value)
		case "labels":
			labels, read = jsonLabels(data, f.valStart, f.end)
		case "managedFields":
			managed, found, read = f, true, true
			// The last member: cut from the end of the one before, with
			// the comma between them; the only one: cut it alone.
			cut = [2]int{f.start, f.end}
			if prev.end > 0 {
				cut[0] = prev.end
			}
		}
		return read
	})
	return labels, cut, ok
}

// jsonLabels reads the object data[start:end] as a map of strings; null is
// no labels.
func jsonLabels(data []byte, start, end int) (map[string]string, bool) {
	if string(data[start:end]) == "null" {
		return nil, true
	}
	labels := map[string]string{}
	_, ok := jsonObject(data[:end], start, func(m jsonMember) bool {
		v, isString := jsonString(data[m.valStart:m.end])
		if _, twice := labels[m.key]; twice || !isString {
			return false
		}
		labels[m.key] = v
		return true
	})
	if len(labels) == 0 {
		// The decoders make an empty map of {}; the cache keeps none for it,
		// as it keeps none for an object decoded with no labels.
		labels = nil
	}
	return labels, ok
}

// jsonObject calls member for each member of the object at data[at] until
// it returns false, and returns where the object ends; false when there is
// no object at data[at], it cannot be followed, or member returned false.
func jsonObject(data []byte, at int, member func(jsonMember) bool) (int, bool) {
	if at >= len(data) || data[at] != '{' {
		return 0, false
	}
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for i < len(data) {
		start := i
		keyEnd, ok := skipString(data, i)
		if !ok {
			return 0, false
		}
		key, ok := jsonString(data[start:keyEnd])
		i = skipSpace(data, keyEnd)
		if !ok || i >= len(data) || data[i] != ':' {
			return 0, false
		}
		valStart := skipSpace(data, i+1)
		end, ok := skipValue(data, valStart)
		if !ok || !member(jsonMember{key: key, start: start, valStart: valStart, end: end}) {
			return 0, false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return 0, false
		}
	}
	return 0, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at data[i].
func skipString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the value starting at data[i]: a
// string, an object or array (strings inside them skipped whole), or a
// literal (a number, true, false, null).
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	start := i
	for ; i < len(data); i++ {
		switch data[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i, i > start
		}
	}
	return 0, false
}

// jsonString returns the string the JSON string b (quotes included) holds;
// false when b is not a string. Strings without escapes and in valid UTF-8
// are taken as they are; the others are read by encoding/json, which reads
// escapes and invalid UTF-8 as the decoders of apimachinery do.
func jsonString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}
