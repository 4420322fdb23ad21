package kvscheduler

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// guard runs a descriptor callback, turning a panic into an error so that a
// buggy descriptor fails one operation instead of the process.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, r)
		}
	}()
	return safeError(f())
}

// safeError returns err, unless formatting it panics (typically a nil
// pointer of an error type, returned as a non-nil error): then an error
// that says so, which statuses, records and logs can format.
func safeError(err error) (out error) {
	if err == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = fmt.Errorf("kvscheduler: the descriptor returned a %T error that cannot be formatted", err)
		}
	}()
	_ = err.Error()
	return err
}

func callDerived(d *regDescriptor, key string, v any) (out []KeyValuePair, err error) {
	err = guard(func() error { out = d.DerivedValues(key, v); return nil })
	return out, err
}

// callDeps asks d for the dependencies of v. Their key selectors are
// wrapped so that one that panics selects nothing (the slice is copied:
// the descriptor may share it).
func callDeps(d *regDescriptor, key string, v any) (out []Dependency, err error) {
	err = guard(func() error { out = d.Dependencies(key, v); return nil })
	cloned := false
	for i, dep := range out {
		if sel := dep.AnyOf.KeySelector; sel != nil {
			if !cloned {
				out, cloned = slices.Clone(out), true
			}
			out[i].AnyOf.KeySelector = func(k string) bool { return safeSelect(sel, k) }
			out[i].matches = &selectorMatches{sel: out[i].AnyOf.KeySelector}
		}
	}
	return out, err
}

// safeSelect calls a descriptor's key selector; one that panics selects
// nothing.
func safeSelect(sel func(string) bool, key string) (ok bool) {
	_ = guard(func() error { ok = sel(key); return nil })
	return ok
}

// safeEqual compares with the descriptor's comparator; a panicking
// comparator means "different", which at worst causes a needless update.
//
// The same pointer twice is equal without asking: every transaction plans
// the whole graph, and most values in it are the very pointers applied
// before, while comparators of rich values (Kubernetes objects) are costly.
func safeEqual(d *regDescriptor, key string, a, b any) (eq bool) {
	if samePointer(a, b) {
		return true
	}
	_ = guard(func() error { eq = d.equivalent(key, a, b); return nil })
	return eq
}

// identical reports whether a and b are the same value without asking a
// comparator: the same pointer, or equal values of a comparable type. A
// comparable type can still hold uncomparable values (an interface field
// holding a slice), whose comparison panics: those are not identical.
func identical(a, b any) (eq bool) {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if t := reflect.TypeOf(a); t == reflect.TypeOf(b) && t.Comparable() {
		defer func() {
			if recover() != nil {
				eq = false
			}
		}()
		return a == b
	}
	return samePointer(a, b)
}

// samePointer reports whether a and b hold the same non-nil pointer.
// Interface comparison cannot be used: it panics on uncomparable values.
func samePointer(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	return ra.Kind() == reflect.Pointer && rb.Kind() == reflect.Pointer && ra.Type() == rb.Type() &&
		!ra.IsNil() && ra.Pointer() == rb.Pointer()
}

func retriable(d *regDescriptor, err error) (ok bool) {
	// An operation held back by a failed Retrieve waits for a resync that
	// can read: a retry would act on the same stale view.
	var re *RetrieveError
	if errors.As(err, &re) {
		return false
	}
	if d == nil || d.IsRetriableFailure == nil {
		return true
	}
	_ = guard(func() error { ok = d.IsRetriableFailure(err); return nil })
	return ok
}
