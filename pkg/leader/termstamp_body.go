package leader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"sigs.k8s.io/yaml"
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

// ErrUnstampable is the cause of the error of a create, or of a write that
// may create, that the fence fails unsent because it cannot read its body
// (an encoding it does not know, such as CBOR, or a body that does not
// decode as its Content-Type says): sent unstamped, it would not be fenced
// by the term policy, and could land after its term.
var ErrUnstampable = errors.New("leader: the fence cannot stamp the body of this write")

// bodyFormat is how a write's body is encoded, as its Content-Type says.
type bodyFormat int

const (
	formatJSON     bodyFormat = iota // application/json (or no Content-Type)
	formatYAML                       // application/yaml, application/apply-patch+yaml (JSON is YAML too)
	formatProtobuf                   // application/vnd.kubernetes.protobuf
	formatUnknown                    // anything else (CBOR): not read, never sent unstamped
)

// formatOf returns the format of a body sent with the Content-Type ct.
func formatOf(ct string) bodyFormat {
	mediaType, _, _ := mime.ParseMediaType(ct)
	switch mediaType {
	case "", "application/json":
		return formatJSON
	case "application/yaml", "application/apply-patch+yaml":
		return formatYAML
	case "application/vnd.kubernetes.protobuf":
		return formatProtobuf
	}
	return formatUnknown
}

// stampBody returns req with the object its body carries stamped: the
// labels of st in place of any stamp it carried, the annotations of
// earlier versions' stamps removed. Its body is decoded by its
// Content-Type and encoded back in the same form (a YAML body as JSON,
// which is YAML, as the API server reads it: sigs.k8s.io/yaml). A body
// the fence cannot read is an error wrapping ErrUnstampable, never a
// write sent unstamped (req's body is closed either way).
func stampBody(req *http.Request, st stamp) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil // creates nothing: the API server refuses it
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	ct := req.Header.Get("Content-Type")
	var out []byte
	switch formatOf(ct) {
	case formatProtobuf:
		out, err = protobufStamp(body, st)
	case formatUnknown:
		err = errors.New("an encoding the fence does not read")
	default:
		var obj map[string]any
		if obj, err = decodeObject(formatOf(ct), body); err == nil {
			stampObject(obj, st)
			out, err = json.Marshal(obj)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s with a body of Content-Type %q: %v", ErrUnstampable, req.Method, req.URL, ct, err)
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	r.ContentLength = int64(len(out))
	return r, nil
}

// decodeObject decodes a JSON or YAML body (format) that holds one
// object, keeping every number as written (decodeExact). A YAML body that
// is not JSON is converted to JSON as the API server converts it
// (sigs.k8s.io/yaml.YAMLToJSON: its first document).
func decodeObject(format bodyFormat, body []byte) (map[string]any, error) {
	var obj map[string]any
	err := decodeExact(body, &obj)
	if err != nil && format == formatYAML {
		var j []byte
		if j, err = yaml.YAMLToJSON(body); err == nil {
			obj = nil
			err = decodeExact(j, &obj)
		}
	}
	if err == nil && obj == nil {
		err = errors.New("the body is not an object")
	}
	return obj, err
}

// stampObject stamps a decoded object's metadata with st.
func stampObject(obj map[string]any, st stamp) {
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
