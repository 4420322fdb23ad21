package kvscheduler

import (
	"context"
	"fmt"
)

// TypedDescriptor is a Descriptor with typed callbacks; Build converts it.
// The fields mean the same as in Descriptor, and the callbacks that talk
// to the southbound get the same context. A value of another type than V
// is reported as an invalid value, not a panic.
type TypedDescriptor[V any] struct {
	Name                 string
	KeySelector          func(key string) bool
	NBKeyPrefix          string
	KeyLabel             func(key string) string
	ValueComparator      func(key string, oldValue, newValue V) bool
	WithMetadata         bool
	Validate             func(key string, value V) error
	Create               func(ctx context.Context, key string, value V) (metadata any, err error)
	Delete               func(ctx context.Context, key string, value V, metadata any) error
	Update               func(ctx context.Context, key string, oldValue, newValue V, oldMetadata any) (any, error)
	UpdateWithRecreate   func(key string, oldValue, newValue V, metadata any) bool
	Retrieve             func(ctx context.Context, correlate []KVWithMetadata) ([]KVWithMetadata, error)
	RetrieveKeys         func(ctx context.Context, keys []string, correlate []KVWithMetadata) ([]KVWithMetadata, error)
	IsRetriableFailure   func(err error) bool
	DerivedValues        func(key string, value V) []KeyValuePair
	Dependencies         func(key string, value V) []Dependency
	RetrieveDependencies []string
}

func cast[V any](key string, v any) (V, error) {
	t, ok := v.(V)
	if !ok {
		var zero V
		return zero, NewInvalidValueError(fmt.Errorf("value of key %q is %T, want %T", key, v, zero))
	}
	return t, nil
}

// Build returns the untyped descriptor.
func (t TypedDescriptor[V]) Build() *Descriptor {
	d := &Descriptor{
		Name: t.Name, KeySelector: t.KeySelector, NBKeyPrefix: t.NBKeyPrefix, KeyLabel: t.KeyLabel,
		WithMetadata: t.WithMetadata, Retrieve: t.Retrieve, RetrieveKeys: t.RetrieveKeys, IsRetriableFailure: t.IsRetriableFailure,
		RetrieveDependencies: t.RetrieveDependencies,
	}
	if f := t.ValueComparator; f != nil {
		d.ValueComparator = func(key string, a, b any) bool {
			x, err1 := cast[V](key, a)
			y, err2 := cast[V](key, b)
			return err1 == nil && err2 == nil && f(key, x, y)
		}
	}
	// The type check always runs so that a wrongly typed value is INVALID.
	validate := t.Validate
	d.Validate = func(key string, v any) error {
		x, err := cast[V](key, v)
		if err != nil || validate == nil {
			return err
		}
		return validate(key, x)
	}
	if f := t.Create; f != nil {
		d.Create = func(ctx context.Context, key string, v any) (any, error) {
			x, err := cast[V](key, v)
			if err != nil {
				return nil, err
			}
			return f(ctx, key, x)
		}
	}
	if f := t.Delete; f != nil {
		d.Delete = func(ctx context.Context, key string, v any, md any) error {
			x, err := cast[V](key, v)
			if err != nil {
				return err
			}
			return f(ctx, key, x, md)
		}
	}
	if f := t.Update; f != nil {
		d.Update = func(ctx context.Context, key string, a, b any, md any) (any, error) {
			x, err := cast[V](key, a)
			if err != nil {
				return nil, err
			}
			y, err := cast[V](key, b)
			if err != nil {
				return nil, err
			}
			return f(ctx, key, x, y, md)
		}
	}
	if f := t.UpdateWithRecreate; f != nil {
		d.UpdateWithRecreate = func(key string, a, b any, md any) bool {
			x, err1 := cast[V](key, a)
			y, err2 := cast[V](key, b)
			return err1 != nil || err2 != nil || f(key, x, y, md)
		}
	}
	if f := t.DerivedValues; f != nil {
		d.DerivedValues = func(key string, v any) []KeyValuePair {
			if x, err := cast[V](key, v); err == nil {
				return f(key, x)
			}
			return nil
		}
	}
	if f := t.Dependencies; f != nil {
		d.Dependencies = func(key string, v any) []Dependency {
			if x, err := cast[V](key, v); err == nil {
				return f(key, x)
			}
			return nil
		}
	}
	return d
}
