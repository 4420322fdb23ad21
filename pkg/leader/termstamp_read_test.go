package leader

import (
	"testing"
)

// TestStampIsFoundHoweverItsKeysAreWritten: the fence finds a stamp, and
// an apply's createOnlyVersion, as the API server reads them, whatever
// escapes the body's encoding writes them with; a key the API server
// does not read (JSON is case-sensitive to it) is no stamp.
func TestStampIsFoundHoweverItsKeysAreWritten(t *testing.T) {
	for _, c := range []struct {
		name                           string
		format                         bodyFormat
		body                           string
		stamped, createOnly, versioned bool
	}{
		{"JSON plain", formatJSON, `{"metadata":{"labels":{"lariat.dev/term-id":"x"}}}`, true, false, false},
		{"JSON \\/", formatJSON, `{"metadata":{"labels":{"lariat.dev\/term-id":"x"}}}`, true, false, false},
		{"JSON \\u", formatJSON, `{"metadata":{"annotations":{"lariat\u002edev\u002fterm":"x"}}}`, true, false, false},
		{"JSON escaped version", formatJSON, `{"metadata":{"resourceVersion":"\u00318446744073709551615"}}`, false, true, true},
		{"JSON other case", formatJSON, `{"Metadata":{"labels":{"lariat.dev/term-id":"x"}}}`, false, false, false},
		{"JSON none", formatJSON, `{"metadata":{"resourceVersion":"5","labels":{"a":"b\n"}}}`, false, false, false},
		{"YAML plain", formatYAML, "metadata:\n  labels:\n    lariat.dev/term-user: x\n", true, false, false},
		{"YAML \\x", formatYAML, "metadata:\n  labels:\n    \"lariat.dev\\x2fterm-lease\": x\n", true, false, false},
		{"YAML version", formatYAML, "metadata:\n  resourceVersion: \"\\x318446744073709551615\"\n", false, true, true},
		{"YAML none", formatYAML, "metadata:\n  resourceVersion: \"7\"\n", false, false, false},
	} {
		stamped, createOnly, versioned, err := carriesStamp(c.format, []byte(c.body))
		if err != nil || stamped != c.stamped || createOnly != c.createOnly || versioned != c.versioned && (c.stamped || c.createOnly) {
			t.Errorf("%s: stamped %v, createOnly %v, versioned %v, %v; want %v, %v, %v", c.name, stamped, createOnly, versioned, err,
				c.stamped, c.createOnly, c.versioned)
		}
	}
	if _, _, _, err := carriesStamp(formatUnknown, []byte("\xd9\xd9\xf7")); err == nil {
		t.Error("a CBOR body: read, want an error (the fence cannot tell whether it creates)")
	}
	if _, _, _, err := carriesStamp(formatProtobuf, []byte(`{"lariat.dev/term-id":"x"}`)); err == nil {
		t.Error("a protobuf body without its envelope: read, want an error")
	}
	// The escapes Go's encoder writes spell no key: such a body is not
	// decoded; one that may spell a key, in any case of its hex digits, is.
	for body, want := range map[string]bool{
		`{"data":{"s":"a \u003c b \u0026 c \u003e \u2028 \u0000"}}`: false,
		`{"data":{"s":"plain \n \" \\ text"}}`:                      false,
		`{"k":"\u002F"}`:                                            true,
		`{"k":"\u006c"}`:                                            true,
		`{"k":"\/"}`:                                                true,
	} {
		if got := mayCarryStamp(formatJSON, []byte(body)); got != want {
			t.Errorf("mayCarryStamp(%s) = %v, want %v", body, got, want)
		}
	}
}
