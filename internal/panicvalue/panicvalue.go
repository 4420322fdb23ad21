// Package panicvalue formats the value a recover returned, for the log
// lines and errors of pkg/controller and pkg/cache, without letting the
// value's own methods end the process.
package panicvalue

import "fmt"

// String formats r as fmt's %v does. fmt recovers a first panic of r's
// String, Error or Format method, but re-panics when printing that panic
// panics again; the recover that got r has already run then, so the new
// panic would escape the goroutine and end the process. String recovers
// it and falls back to r's type, which no user method can take part in.
func String(r any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("(a %T whose formatting panicked)", r)
		}
	}()
	return fmt.Sprint(r)
}
