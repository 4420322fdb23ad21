package dashboard

import (
	"errors"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// quotedText matches a double-quoted or back-quoted string, escapes
// included: the API server quotes the rejected value of a field this way
// (`spec.password: Invalid value: "..."`), and so do most Go errors (%q).
var quotedText = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")

// fieldValue matches the unquoted value of a field error (numbers, maps,
// lists: `Invalid value: 12345: must be ...`) up to the first ": " (which
// starts the detail), or the end; the part of such a value after a ": "
// of its own would stay.
var fieldValue = regexp.MustCompile(`((?:Invalid|Unsupported|Duplicate|Forbidden|Required|Not found) value: )([^"` + "`" + `<].*?)(: |$)`)

// scrub removes from the text of an error what may be a field's value:
// every quoted string and every unquoted value of a field error. What is
// left says which field failed and why (the reason, the schema's rule),
// which is what an error of a redacted kind may show.
func scrub(text string) string {
	text = quotedText.ReplaceAllString(text, `"`+Redacted+`"`)
	return fieldValue.ReplaceAllString(text, "${1}"+Redacted+"${3}")
}

// redactedKinds are the kinds whose errors are scrubbed: Secrets and
// Options.RedactKinds.
func (d *Dashboard) redactedKinds() []schema.GroupKind {
	return append([]schema.GroupKind{secrets}, d.opts.RedactKinds...)
}

// sensitiveKey tells whether key holds a value the dashboard redacts.
func (d *Dashboard) sensitiveKey(key string) bool {
	for _, p := range d.opts.RedactKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	for _, gk := range d.redactedKinds() {
		if strings.HasPrefix(key, kubedescriptor.KeyPrefix(gk)) {
			return true
		}
	}
	return false
}

// mentionsSensitive tells whether the text of an error not tied to one key
// (a transaction's or an event's) names a value the dashboard redacts: by
// its key, or as the API server names an object ("Secret "x" is invalid",
// "Credentials.example.com "db" is invalid").
func (d *Dashboard) mentionsSensitive(text string) bool {
	for _, p := range d.opts.RedactKeyPrefixes {
		if strings.Contains(text, p) {
			return true
		}
	}
	for _, gk := range d.redactedKinds() {
		name := gk.Kind
		if gk.Group != "" {
			name += "." + gk.Group
		}
		if strings.Contains(text, kubedescriptor.KeyPrefix(gk)) || strings.Contains(text, name+` "`) {
			return true
		}
	}
	return false
}

// errText returns the text of err as the page may show it: scrubbed
// (see scrub) when it is the error of a redacted value (key, or
// a KeyError's key) or mentions one; key is "" when the error is not
// tied to one value.
func (d *Dashboard) errText(key string, err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	var ke kvscheduler.KeyError
	if key == "" && errors.As(err, &ke) {
		key = ke.Key
	}
	if d.sensitiveKey(key) || d.mentionsSensitive(text) {
		return scrub(text)
	}
	return text
}
