package generic

import (
	"context"
	"errors"
)

// boundWork is work started beside the factory's controllers, with its own
// goroutines (an event loop), that a run of the factory must outlive.
type boundWork struct {
	ctx  context.Context
	wait func(context.Context) error
}

// Bind ties work started beside the factory's controllers to the
// factory's runs: once ctx (the work's own context, which ends its work)
// has ended, Run and Wait return only after wait returned, and join its
// error to theirs. A term function that ends with `return f.Run(ctx, 2)`
// thus waits for everything its term started on the factory, not only
// the controllers' handlers, before pkg/leader or pkg/shard release the
// Lease. wait must be bounded (a stop timeout), and should return an error
// matching controller.ErrStillRunning when its work outlived that bound,
// so that the Lease is left to expire. Work whose ctx is still live when
// a run ends is not waited for: it is not that run's. A work waited for is
// forgotten, so that the next run (a new term) does not report its error
// again; unbind forgets it before (its stop is over with nothing to
// report); it is idempotent.
func (f *Factory) Bind(ctx context.Context, wait func(context.Context) error) (unbind func()) {
	b := &boundWork{ctx: ctx, wait: wait}
	f.mu.Lock()
	if f.bound == nil {
		f.bound = map[*boundWork]struct{}{}
	}
	f.bound[b] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.bound, b)
		f.mu.Unlock()
	}
}

// waitBound waits for each bound work whose context has ended, or for ctx
// to end; it returns their errors joined.
func (f *Factory) waitBound(ctx context.Context) error {
	f.mu.Lock()
	var ended []*boundWork
	for b := range f.bound {
		if b.ctx.Err() != nil {
			ended = append(ended, b)
		}
	}
	f.mu.Unlock()
	var errs []error
	for _, b := range ended {
		err := b.wait(ctx)
		if ctx.Err() != nil {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, err)
		f.mu.Lock()
		delete(f.bound, b)
		f.mu.Unlock()
	}
	return errors.Join(errs...)
}
