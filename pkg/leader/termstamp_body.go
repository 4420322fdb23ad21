package leader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"

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
// by the term policy, and could land after its term. It is also the cause
// of the error of a write whose JSON body the fence must read or change
// and that writes a key twice (strictjson.go): the fence would read it,
// and encode it back, unlike the API server.
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
	return mediaFormat(mediaType)
}

// mediaFormat returns the format of a body of the media type mediaType.
func mediaFormat(mediaType string) bodyFormat {
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
	format := formatOf(ct)
	var out []byte
	switch format {
	case formatProtobuf:
		out, err = protobufStamp(body, st)
	case formatUnknown:
		err = errors.New("an encoding the fence does not read")
	default:
		var obj map[string]any
		if obj, err = decodeObject(format, body); err == nil {
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
	if err == nil {
		err = duplicateKey(body) // encoded back: strictjson.go
	} else if format == formatYAML {
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

// carriesStamp reports whether the object of a write's body (format)
// carries a stamp of any version, whether it is an apply that only
// creates (its resourceVersion is createOnlyVersion), and whether it has
// a resourceVersion the API server reads as one (readVersion: a PUT that
// has one only updates, the API server refuses to create an object from
// it; "0" is none). It reads the body as
// stampBody does, so what it finds is what the API server finds; a body
// it must read and cannot is an error.
func carriesStamp(format bodyFormat, body []byte) (stamped, createOnly, versioned bool, err error) {
	if !mayCarryStamp(format, body) {
		return false, false, false, nil
	}
	if format == formatProtobuf {
		if !bytes.HasPrefix(body, protobufMagic) {
			return false, false, false, errors.New("no Kubernetes protobuf envelope")
		}
		meta := objectMeta(body)
		rest, ok := dropStampEntries(meta)
		rv, _ := protoBytes(meta, metaResourceVersion)
		_, versioned := readVersion(string(rv))
		return ok && len(rest) != len(meta), false, versioned, nil
	}
	if format == formatUnknown {
		return false, false, false, errors.New("an encoding the fence does not read")
	}
	md, err := decodeMetadata(format, body)
	if err != nil {
		return false, false, false, err
	}
	labels, _ := md["labels"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	for k := range labels {
		stamped = stamped || stampLabels[k]
	}
	for k := range annotations {
		stamped = stamped || stampAnnotations[k]
	}
	rv, _ := md["resourceVersion"].(string)
	createOnly, versioned = readVersion(rv)
	return stamped, createOnly, versioned, nil
}

// readVersion reads a write's resourceVersion rv as the API server's
// versioner does (storage.APIObjectVersioner: a decimal uint64, "" and 0
// being none): createOnly when it is createOnlyVersion's number (however
// many leading zeros it is written with), versioned when it is a version
// at all. "0" (or "00") is none: a PUT of it is an unconditional update,
// and a create of a missing object of a kind that allows a create by
// update, so it is not an update that never creates. A resourceVersion
// that is not a number is versioned: the API server refuses the write, it
// creates nothing.
func readVersion(rv string) (createOnly, versioned bool) {
	if rv == "" {
		return false, false
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return false, true
	}
	return n == math.MaxUint64, n != 0
}

// decodeMetadata returns the metadata of the object of a JSON or YAML
// body (format). Keys are matched exactly, as the API server decodes
// them; a JSON body that writes a key twice is an error (strictjson.go).
func decodeMetadata(format bodyFormat, body []byte) (map[string]any, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		obj, err := decodeObject(format, body) // YAML, or not an object
		if err != nil {
			return nil, err
		}
		md, _ := obj["metadata"].(map[string]any)
		return md, nil
	}
	if err := duplicateKey(body); err != nil {
		return nil, err // its metadata may not be what the API server reads
	}
	var md map[string]any
	if raw, ok := top["metadata"]; ok && json.Unmarshal(raw, &md) != nil {
		md = nil // not an object: no stamp, no resourceVersion
	}
	return md, nil
}

// mayCarryStamp is false when a body (format) cannot carry a stamp key or
// createOnlyVersion, told from its bytes alone, so that most writes are
// not decoded: every stamp key starts with "lariat.dev/term". In protobuf
// a string is as written. In JSON a string may be written with escapes
// (`\/`, `\u002f`): a body with `\/`, or a `\u` escape of a character a
// stamp key or createOnlyVersion has (hasKeyCharEscape), is decoded; the
// escapes Go's encoder writes ('<', '>', '&', control characters) are not
// such, so the bodies of most writes are not decoded. In YAML a quoted
// string has more escapes (`\x2f`, `\U0000002f`): a body with a
// backslash is decoded. A body in another encoding is always read (and
// carriesStamp refuses it).
func mayCarryStamp(format bodyFormat, body []byte) bool {
	if bytes.Contains(body, []byte("lariat.dev/term")) || bytes.Contains(body, []byte(createOnlyVersion)) {
		return true
	}
	switch format {
	case formatProtobuf:
		return false
	case formatJSON:
		return bytes.Contains(body, []byte(`\/`)) || hasKeyCharEscape(body)
	case formatYAML:
		return bytes.IndexByte(body, '\\') >= 0
	}
	return true
}

// hasKeyCharEscape reports whether a JSON body has a \u escape of a
// character of "-./0-9a-z" (those of the stamp keys and of
// createOnlyVersion). A \u preceded by an escaped backslash is counted
// too: it only costs a decode.
func hasKeyCharEscape(body []byte) bool {
	for {
		i := bytes.Index(body, []byte(`\u`))
		if i < 0 || len(body) < i+6 {
			return false
		}
		if r, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16); err == nil &&
			(r >= '-' && r <= '9' || r >= 'a' && r <= 'z') {
			return true
		}
		body = body[i+2:]
	}
}
