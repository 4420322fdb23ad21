package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// Gate decides, for one pass over a key, whether the kind's handlers run.
// It exists for what the cache alone cannot tell: a sharded kind's cache
// holds only this replica's share, so an object missing from it may have
// been deleted or may have moved to another replica, and an object still in
// it may be on its way out (see package shard).
//
// Admit runs in the worker that holds the key, before the handlers, on
// every pass (never concurrently with a handler for the same key), with the
// controller run's context. obj is the cached object, nil when the cache
// holds none. handle=false skips the handlers for this pass, as if they had
// returned nil. An error retries the key with backoff, like a handler's
// error (a conflict, or an error marked with RetryQuietly, is retried
// without an error line).
type Gate interface {
	Admit(ctx context.Context, key string, obj runtime.Object) (handle bool, err error)
}

// GateFunc adapts a function to Gate.
type GateFunc func(ctx context.Context, key string, obj runtime.Object) (bool, error)

// Admit calls f.
func (f GateFunc) Admit(ctx context.Context, key string, obj runtime.Object) (bool, error) {
	return f(ctx, key, obj)
}
