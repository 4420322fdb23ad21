package leader

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// stamp is what a write is stamped with: id (TermIDLabel), user
// (TermUserLabel, not stamped when ""), lease (TermLeaseLabel).
type stamp struct{ id, user, lease string }

// stampLabels and stampAnnotations are the keys of a stamp, of this
// version and of earlier ones: what the fence writes over, or strips.
var (
	stampLabels      = map[string]bool{TermLeaseLabel: true, TermIDLabel: true, TermUserLabel: true}
	stampAnnotations = map[string]bool{TermAnnotation: true, TermUserAnnotation: true}
)

// stampBody returns req with the object its body carries stamped: the
// labels of st in place of any stamp it carried, the annotations of
// earlier versions' stamps removed. JSON and Kubernetes protobuf bodies
// are stamped; others (CBOR, YAML) go as they are, and are not fenced by
// the policy.
func stampBody(req *http.Request, st stamp) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := body
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	switch {
	case bytes.HasPrefix(body, protobufMagic):
		out = protobufStamp(body, st)
	case mediaType == "application/json" || mediaType == "" || mediaType == "application/apply-patch+yaml":
		// An apply patch in YAML that is not JSON is left as it is.
		out = jsonStamp(body, st)
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	r.ContentLength = int64(len(out))
	return r, nil
}

// carriesStamp reports whether the object of a write's body (JSON or
// Kubernetes protobuf) carries a stamp of any version, whether it is an
// apply that only creates (its resourceVersion is createOnlyVersion), and
// whether it has a resourceVersion at all (a PUT that has one only
// updates: the API server refuses to create an object from it).
func carriesStamp(body []byte) (stamped, createOnly, versioned bool) {
	if !bytes.Contains(body, []byte("lariat.dev/term")) && !bytes.Contains(body, []byte(createOnlyVersion)) {
		// Every stamp key starts so, in JSON and in protobuf alike:
		// most writes are told apart without decoding.
		return false, false, false
	}
	if bytes.HasPrefix(body, protobufMagic) {
		meta := objectMeta(body)
		rest, ok := dropStampEntries(meta)
		rv, _ := protoBytes(meta, metaResourceVersion)
		return ok && len(rest) != len(meta), false, len(rv) > 0
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return false, false, false
	}
	md := obj.Metadata
	for k := range md.Labels {
		stamped = stamped || stampLabels[k]
	}
	for k := range md.Annotations {
		stamped = stamped || stampAnnotations[k]
	}
	return stamped, md.ResourceVersion == createOnlyVersion, md.ResourceVersion != ""
}

// jsonStamp stamps a JSON object's metadata (body unchanged if it is not
// a JSON object). Numbers are kept as written.
func jsonStamp(body []byte, st stamp) []byte {
	var obj map[string]any
	if decodeExact(body, &obj) != nil || obj == nil {
		return body
	}
	md := nested(obj, "metadata")
	labels := nested(md, "labels")
	labels[TermLeaseLabel], labels[TermIDLabel] = st.lease, st.id
	if st.user != "" {
		labels[TermUserLabel] = st.user
	} else {
		delete(labels, TermUserLabel) // another user's: judged whoever sends
	}
	if annotations, ok := md["annotations"].(map[string]any); ok {
		for k := range stampAnnotations {
			delete(annotations, k)
		}
	}
	return marshalOr(obj, body)
}

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
// entries of any stamp are dropped, and the labels of st appended.
func protobufStamp(body []byte, st stamp) []byte {
	env := body[len(protobufMagic):]
	raw := protoField(env, 2)
	if raw == nil {
		return body
	}
	meta, ok := dropStampEntries(protoField(raw, 1))
	if !ok {
		return body
	}
	meta = appendMapEntry(meta, metaLabels, TermLeaseLabel, st.lease)
	meta = appendMapEntry(meta, metaLabels, TermIDLabel, st.id)
	if st.user != "" {
		meta = appendMapEntry(meta, metaLabels, TermUserLabel, st.user)
	}
	newRaw, ok := replaceField(raw, 1, meta)
	if !ok {
		return body
	}
	newEnv, ok := replaceField(env, 2, newRaw)
	if !ok {
		return body
	}
	return append(append([]byte(nil), protobufMagic...), newEnv...)
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
