package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
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
// holds none. It is nil only for a key the controller knows (its cache had
// the object, or its handlers were given it, and they have not been told
// since that it is gone): the absence of any other key is not this
// replica's to report, and its pass skips the gate and the handlers. A
// refusal of a nil obj says the object is not this replica's (any more):
// the key is then forgotten. handle=false skips the handlers for this
// pass, as if they had returned nil. An error retries the key with
// backoff, like a handler's error (a conflict, or an error marked with
// RetryQuietly, is retried without an error line). For a nil obj,
// AbsentUID(ctx) tells the UID of the object held under key (the one the
// handlers were last given, or else the one the cache had), so that an
// object created anew under that name is not taken for the one that went.
type Gate interface {
	// Admit tells whether key's handlers run for obj on this pass.
	Admit(ctx context.Context, key string, obj runtime.Object) (handle bool, err error)
}

// GateFunc adapts a function to Gate.
type GateFunc func(ctx context.Context, key string, obj runtime.Object) (bool, error)

// Admit calls f.
func (f GateFunc) Admit(ctx context.Context, key string, obj runtime.Object) (bool, error) {
	return f(ctx, key, obj)
}

// admit asks the gate whether key's handlers run for robj. The absence of
// a key the controller does not know is nothing for its handlers: the
// object was never this replica's to handle (only the gate's kind of
// cache, filtered to a share, makes that question arise).
func (c *controller) admit(ctx context.Context, r *run, w *worker, key string, ticket workqueue.Ticket, robj runtime.Object) (bool, error) {
	if robj == nil && !c.known.has(key) {
		return false, nil
	}
	w.running("gate")
	if robj == nil {
		ctx = context.WithValue(ctx, absentUIDKey{}, c.known.uidOf(key))
		if rv := c.known.carriedAt(key); rv != "" {
			ctx = context.WithValue(ctx, carriedAtKey{}, rv)
		} else if rv, held := c.known.carriedSince(key); rv != "" {
			ctx = context.WithValue(ctx, carriedSinceKey{}, carriedSinceValue{rv: rv, held: held})
		}
	}
	var handle bool
	err := recovered("Admit", func() (err error) {
		handle, err = c.opts.Gate.Admit(ctx, key, robj)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("gate: %w", err)
	}
	if !handle && robj == nil {
		c.ended(key, r.queue, ticket) // not this replica's to see go
	}
	return handle, nil
}

// absentUIDKey is the context key of AbsentUID's value.
type absentUIDKey struct{}

// AbsentUID returns, in a Gate's Admit for a pass over an absent object
// (obj nil), the UID of the object the kind's handlers were last given
// under the key or, when they were given none (the cache had the object,
// and it went before a pass gave it to them), the one the cache last had:
// the one whose absence the pass is about. It is empty outside such a
// pass, and for an object the cache knew without a UID. A context
// value, rather than an argument, so that a Gate wrapped in another (a
// GateFunc that delegates) passes it on unchanged.
func AbsentUID(ctx context.Context) types.UID {
	uid, _ := ctx.Value(absentUIDKey{}).(types.UID)
	return uid
}

// uidOf returns the UID of a cached object, empty when it has none.
func uidOf(obj runtime.Object) types.UID {
	o, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return o.GetUID()
}
