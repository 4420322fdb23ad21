package eventloop

import (
	"context"
	"errors"
	"sync"
)

// Result delivers the outcome of an event to the producers waiting for it.
// Embed it in an event type to implement Event.Done and to give producers
// Wait. The zero value is ready to use; a Result must not be copied after
// first use.
type Result struct {
	mu     sync.Mutex
	done   bool
	err    error
	ch     chan struct{}
	parent *txn // set when the event was pushed as a follow-up
}

// Done records the outcome and releases the waiters. Only the first call has
// an effect (the loop calls it once, but a producer may also complete an
// event it never managed to push).
func (r *Result) Done(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.done, r.err = true, err
	if r.ch != nil {
		close(r.ch)
	}
}

// Wait blocks until Done is called and returns its error, or returns the
// context's error when ctx ends first.
//
// Waiting from inside the event loop cannot succeed, because the event can
// only be processed after the waiting handler returns. Instead of
// deadlocking, Wait returns ErrWaitInLoop when ctx is (or derives from) the
// context of a transaction (ResyncOperations.Context), or when the event was
// pushed as a follow-up and its parent is still being processed.
func (r *Result) Wait(ctx context.Context) error {
	if ctx == nil {
		return errors.New("eventloop: Wait called with a nil context")
	}
	r.mu.Lock()
	if r.done {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if InLoop(ctx) || (r.parent != nil && !r.parent.finished.Load()) {
		r.mu.Unlock()
		return ErrWaitInLoop
	}
	if r.ch == nil {
		r.ch = make(chan struct{})
	}
	ch := r.ch
	r.mu.Unlock()

	select {
	case <-ch:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IsDone reports whether Done has been called, and with which error.
func (r *Result) IsDone() (done bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, r.err
}

// setFollowUpParent implements followUpLinker, so that an event embedding
// Result knows when it was pushed from inside the loop.
func (r *Result) setFollowUpParent(t *txn) {
	r.mu.Lock()
	r.parent = t
	r.mu.Unlock()
}

// followUpLinker is implemented by events embedding Result; the method is
// unexported so that only Result implements it.
type followUpLinker interface {
	setFollowUpParent(t *txn)
}

type loopCtxKey struct{}

// InLoop reports whether ctx is (or derives from) the context handed to
// handlers through a transaction, i.e. whether the caller runs inside an event
// loop.
func InLoop(ctx context.Context) bool {
	return ctx != nil && ctx.Value(loopCtxKey{}) != nil
}
