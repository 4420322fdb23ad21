package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// stop ends a Run whose context ended, in the order the work flows back:
// the controllers' handlers (they read the scheduler and enqueue) return
// first, within their stop grace; then the event loop, which closed itself
// when ctx ended, has stopped; then the scheduler it committed to is
// closed, which cancels the descriptors' requests in flight and waits for
// the call in progress (Options.CloseTimeout). Work still running by then
// (a loop handler past the loop's 10 s stop bound, a descriptor call past
// the close timeout) is returned as an error matching
// controller.ErrStillRunning.
func (o *Operator) stop(ctx context.Context, controllersStarted <-chan struct{}) error {
	var errs []error
	if controllersStarted != nil {
		// Start returns soon once ctx ended; then Wait sees every run it
		// began.
		<-controllersStarted
		if err := o.factory.Wait(context.WithoutCancel(ctx)); err != nil {
			errs = append(errs, err)
		}
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := o.loop.Stop(stopCtx); errors.Is(err, eventloop.ErrStillRunning) {
		// A handler of the loop still runs: the term must not release
		// its Lease.
		errs = append(errs, fmt.Errorf("webapp operator: %w: %w", controller.ErrStillRunning, err))
	} else if err != nil {
		o.log.WithError(err).Warn("webapp operator: stopping the event loop")
	}
	if err := o.sched.Close(); err != nil {
		if errors.Is(err, kvscheduler.ErrCloseTimeout) {
			errs = append(errs, fmt.Errorf("webapp operator: %w: %w", controller.ErrStillRunning, err))
		} else {
			o.log.WithError(err).Warn("webapp operator: closing the scheduler")
		}
	}
	return errors.Join(errs...)
}
