package model

import (
	"cmp"
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// Error is a problem with the input, at a position in a source file.
type Error struct {
	// Pos is where the problem is; its file name may be relative.
	Pos token.Position
	// Msg says what is wrong and, where it can, how to fix it.
	Msg string
}

// Error formats the error as file:line:col: message, which editors and go
// vet users recognize.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
}

// errorList gathers every problem of a run, so that one run reports all of
// them instead of one per run.
type errorList struct {
	// base is the directory file names are shown relative to.
	base string
	errs []*Error
}

func (l *errorList) add(pos token.Position, format string, args ...any) {
	pos.Filename = relativeTo(l.base, pos.Filename)
	l.errs = append(l.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// err returns the errors sorted by position, joined, or nil.
func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	slices.SortFunc(l.errs, func(a, b *Error) int {
		return cmp.Or(strings.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column),
			strings.Compare(a.Msg, b.Msg))
	})
	errs := make([]error, 0, len(l.errs))
	for i, e := range l.errs {
		if i > 0 && *e == *l.errs[i-1] {
			continue // two stages found the same problem
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// relativeTo shortens name to a path relative to base when name lies below
// base, which keeps messages short and stable across machines.
func relativeTo(base, name string) string {
	if base == "" || !filepath.IsAbs(name) {
		return name
	}
	rel, err := filepath.Rel(base, name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return name
	}
	return rel
}

// ParsePos parses a "file:line:col" position as go/packages reports them.
func ParsePos(s string) token.Position { return parsePos(s) }

// RelativeTo is relativeTo for positions that other packages report.
func RelativeTo(base, name string) string { return relativeTo(base, name) }

// Join flattens errs, joined ones included, into one error that lists
// every problem once: positioned problems sorted by position after the
// others, file names relative to base. It returns nil when there are none.
// Every stage of a run adds its problems, so one run reports them all.
func Join(base string, errs ...error) error {
	l := &errorList{base: base}
	var other []error
	var flatten func(error)
	flatten = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			l.add(e.Pos, "%s", e.Msg)
		case interface{ Unwrap() []error }:
			for _, sub := range e.Unwrap() {
				flatten(sub)
			}
		default:
			other = append(other, err)
		}
	}
	for _, err := range errs {
		flatten(err)
	}
	positioned := l.err()
	if positioned == nil && len(other) == 0 {
		return nil
	}
	return errors.Join(append(other, positioned)...)
}
