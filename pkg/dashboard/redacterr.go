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
// starts the detail) or the end of its line (an errors.Join of field
// errors has one per line); the part of such a value after a ": " of its
// own would stay.
var fieldValue = regexp.MustCompile(`(?m)((?:Invalid|Unsupported|Duplicate|Forbidden|Required|Not found) value: )([^"` + "`" + `<\n].*?)(: |$)`)

// scrub removes from the text of an error what may be a field's value:
// every quoted string, everything between braces (a Go value printed with
// %v or %+v, &Secret{...}, a JSON object), everything in a printed map
// (map[...]), and every unquoted value of a field error, on every line.
// What is left says which field failed and why (the reason, the schema's
// rule), which is what an error of a redacted kind may show.
func scrub(text string) string {
	text = quotedText.ReplaceAllString(text, `"`+Redacted+`"`)
	text = hideBetween(text, "{", '{', '}')
	text = hideBetween(text, "map[", '[', ']')
	return fieldValue.ReplaceAllString(text, "${1}"+Redacted+"${3}")
}

// hideBetween replaces what follows each start (which ends with open) up
// to its matching close, nesting counted, by Redacted; an unclosed one
// hides the rest of the text. Quoted strings are scrubbed before, so a
// brace in one cannot end the group early.
func hideBetween(text, start string, open, closing byte) string {
	var b strings.Builder
	for {
		i := strings.Index(text, start)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i+len(start)])
		b.WriteString(Redacted)
		rest := text[i+len(start):]
		depth, end := 1, len(rest)
		for j := 0; j < len(rest) && depth > 0; j++ {
			switch rest[j] {
			case open:
				depth++
			case closing:
				if depth--; depth == 0 {
					end = j
				}
			}
		}
		if end == len(rest) {
			return b.String()
		}
		b.WriteByte(closing)
		text = rest[end+1:]
	}
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
// its key, as the API server names an object ("Secret "x" is invalid",
// "Credentials.example.com "db" is invalid"), or as Go prints one with %v
// (&Secret{...}) or %+v (StringData:, Data:map[).
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
		if strings.Contains(text, kubedescriptor.KeyPrefix(gk)) || strings.Contains(text, name+` "`) ||
			strings.Contains(text, gk.Kind+"{") {
			return true
		}
	}
	return strings.Contains(text, "StringData:") || strings.Contains(text, "Data:map[")
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
