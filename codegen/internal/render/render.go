// Package render writes the Go code the generator emits besides deepcopy:
// the registration file of an API package and the typed controllers of a
// group, from the templates in templates/, formatted with go/format.
package render

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// parseTemplates parses the templates on each call rather than once into a
// package variable, so the package holds no state; parsing takes
// microseconds.
func parseTemplates() (*template.Template, error) {
	return template.New("").ParseFS(templateFS, "templates/*.tmpl")
}

// execute renders one template and formats the result, so the output is
// gofmt-clean whatever the template's whitespace.
func execute(name string, data any) ([]byte, error) {
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	out, err := format.Source(buf.Bytes())
	if err != nil {
		// A bug in a template, not in the input; show the source to fix it.
		return nil, fmt.Errorf("format %s: %w\n%s", name, err, buf.Bytes())
	}
	return out, nil
}

// headerText returns the boilerplate followed by a blank line, or "".
func headerText(header []byte) string {
	if len(bytes.TrimSpace(header)) == 0 {
		return ""
	}
	return string(bytes.TrimRight(header, "\n")) + "\n\n"
}
