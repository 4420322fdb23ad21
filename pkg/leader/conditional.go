package leader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Conditional writes: a write through the fence of an object a handler of
// the term is handling carries a resourceVersion precondition, the version
// of the copy the handler was given (or what the pass's last write of it
// returned), unless it carries one of its own. The API server then refuses
// it with a conflict once anyone else wrote the object: a write that sat
// in the network past the term cannot land after another replica handled
// and wrote the object. (The sharder's move of an object is a write of it,
// so under sharding any later member's handling makes the old member's
// write fail.)

// withPrecondition returns req, a write of the subresource sub ("" for
// the object itself), with resourceVersion as its precondition, or req
// itself when it is a creation or its body carries one already. JSON and
// Kubernetes protobuf bodies are both given one (conditional_proto.go).
//
// A POST names an object only for a subresource. Two of those change the
// object and carry a precondition the API server checks against it: an
// eviction (pods/NAME/eviction: the Eviction's
// deleteOptions.preconditions.resourceVersion, checked as a delete's) and
// a binding (pods/NAME/binding: the Binding's metadata.resourceVersion,
// compared with the pod's). Other POSTs go as they are.
func withPrecondition(req *http.Request, resourceVersion, sub string) (*http.Request, error) {
	post := req.Method == http.MethodPost
	if post && sub != "eviction" && sub != "binding" {
		return req, nil
	}
	eviction := post && sub == "eviction"
	// An update's or a patch's "0" is no version to the API server
	// (isVersion); a binding's is compared with the pod's as a string, a
	// precondition of its own (one that fails).
	own := isVersion
	if post {
		own = func(rv string) bool { return rv != "" }
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	out := body
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	switch {
	case bytes.HasPrefix(body, protobufMagic) && eviction:
		out = protobufEvictionPrecondition(body, resourceVersion)
	case bytes.HasPrefix(body, protobufMagic) && req.Method == http.MethodDelete:
		out = protobufDeletePrecondition(body, resourceVersion)
	case bytes.HasPrefix(body, protobufMagic):
		// A protobuf update or binding (patches are never protobuf).
		out = protobufObjectPrecondition(body, resourceVersion, own)
	case eviction:
		out = evictionPrecondition(body, resourceVersion)
	case req.Method == http.MethodDelete:
		out = deletePrecondition(body, resourceVersion)
	case mediaType == "application/json-patch+json":
		out = jsonPatchPrecondition(body, resourceVersion)
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "patch+json") || mediaType == "application/apply-patch+yaml":
		// A merge, strategic merge or apply patch, or a JSON update: a
		// resourceVersion in the object is a precondition. An apply
		// patch in YAML that is not JSON is left as it is.
		out = objectPrecondition(body, resourceVersion, own)
	}
	if !bytes.HasPrefix(body, protobufMagic) && !bytes.Equal(out, body) {
		// Changed, it is encoded back from maps: refused if its JSON
		// writes a key twice, which the API server reads otherwise.
		if err := duplicateKey(body); err != nil {
			return nil, fmt.Errorf("%w: %s %s: %v", ErrUnstampable, req.Method, req.URL, err)
		}
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	r.ContentLength = int64(len(out))
	if r.Header.Get("Content-Type") == "" && len(out) > 0 && len(body) == 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, nil
}

// objectPrecondition sets metadata.resourceVersion in a JSON object that
// has none of its own (own says which are: to an update, "0" or "00" is
// none, an unconditional write, so it is replaced too).
func objectPrecondition(body []byte, resourceVersion string, own func(rv string) bool) []byte {
	var obj map[string]any
	if decodeExact(body, &obj) != nil || obj == nil {
		return body
	}
	md := nested(obj, "metadata")
	if rv, _ := md["resourceVersion"].(string); own(rv) {
		return body
	}
	md["resourceVersion"] = resourceVersion
	return marshalOr(obj, body)
}

// jsonPatchPrecondition appends the replacement of metadata.resourceVersion
// to a JSON patch that does not set it to a version of its own: the
// patched object then carries the version, which the API server checks
// like an update's. A patch whose last operation on the path sets a
// version the API server reads as none ("0"), removes it, or moves or
// copies something there is given an add after it (replace would fail on
// a removed path): the last operation wins.
func jsonPatchPrecondition(body []byte, resourceVersion string) []byte {
	var ops []map[string]any
	if decodeExact(body, &ops) != nil {
		return body
	}
	op := "replace" // the patch leaves the version the object has
	for _, o := range ops {
		if p, _ := o["path"].(string); p != "/metadata/resourceVersion" || o["op"] == "test" {
			continue
		}
		op = "add"
		if o["op"] == "add" || o["op"] == "replace" {
			if rv, _ := o["value"].(string); isVersion(rv) {
				op = ""
			}
		}
	}
	if op == "" {
		return body // its own precondition
	}
	ops = append(ops, map[string]any{"op": op, "path": "/metadata/resourceVersion", "value": resourceVersion})
	return marshalOr(ops, body)
}

// isVersion reports whether a write's resourceVersion rv is one the API
// server reads as a precondition: not "", "0" or "00" (readVersion).
func isVersion(rv string) bool {
	_, versioned := readVersion(rv)
	return versioned
}

// deletePrecondition sets preconditions.resourceVersion in DeleteOptions
// (an empty body is empty options).
func deletePrecondition(body []byte, resourceVersion string) []byte {
	obj := map[string]any{}
	if len(bytes.TrimSpace(body)) > 0 && decodeExact(body, &obj) != nil {
		return body
	}
	if !setDeletePrecondition(obj, resourceVersion) {
		return body
	}
	if _, ok := obj["kind"]; !ok {
		obj["kind"], obj["apiVersion"] = "DeleteOptions", "v1"
	}
	return marshalOr(obj, body)
}

// evictionPrecondition sets deleteOptions.preconditions.resourceVersion in
// a JSON Eviction whose delete options have none.
func evictionPrecondition(body []byte, resourceVersion string) []byte {
	var obj map[string]any
	if decodeExact(body, &obj) != nil || obj == nil {
		return body
	}
	if !setDeletePrecondition(nested(obj, "deleteOptions"), resourceVersion) {
		return body
	}
	return marshalOr(obj, body)
}

// setDeletePrecondition sets preconditions.resourceVersion in decoded
// DeleteOptions, and reports false (changing nothing) if they carry one.
func setDeletePrecondition(opts map[string]any, resourceVersion string) bool {
	pre := nested(opts, "preconditions")
	if rv, _ := pre["resourceVersion"].(string); rv != "" {
		return false
	}
	pre["resourceVersion"] = resourceVersion
	return true
}

// nested returns the object under key in m, putting an empty one there
// when it has none (or something else): the bodies the fence changes are
// decoded to maps and encoded again only when it changed them.
func nested(m map[string]any, key string) map[string]any {
	child, _ := m[key].(map[string]any)
	if child == nil {
		child = map[string]any{}
		m[key] = child
	}
	return child
}

// decodeExact decodes a body that is re-encoded after a change, keeping
// every number as written: decoded as float64, an integer above 2^53 (an
// int64 field of a custom resource) would go out rounded, a field the
// handler never meant to change.
func decodeExact(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func marshalOr(v any, fallback []byte) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return fallback
	}
	return b
}

// protobufMagic starts every Kubernetes protobuf body.
var protobufMagic = []byte("k8s\x00")

// resourceVersionOf returns the metadata.resourceVersion of a response
// body, JSON or Kubernetes protobuf ("" when it has none, or is a Status).
func resourceVersionOf(contentType string, body []byte) string {
	if bytes.HasPrefix(body, protobufMagic) {
		return protobufResourceVersion(body[len(protobufMagic):])
	}
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil || obj.Kind == "Status" {
		return ""
	}
	return obj.Metadata.ResourceVersion
}

// protobufResourceVersion reads a runtime.Unknown envelope (typeMeta = 1,
// raw = 2) whose raw object has its ObjectMeta as field 1, whose
// resourceVersion is field 6: true of every built-in kind.
func protobufResourceVersion(b []byte) string {
	kind := string(protoField(protoField(b, 1), 2)) // TypeMeta.kind
	if kind == "Status" {
		return ""
	}
	return string(protoField(protoField(protoField(b, 2), 1), 6))
}

// protoField returns the bytes of the first length-delimited field num of
// message b (nil if none).
func protoField(b []byte, num protowire.Number) []byte {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil
			}
			return v
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil
		}
		b = b[l:]
	}
	return nil
}
