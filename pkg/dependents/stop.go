package dependents

import (
	"context"
	"errors"
	"time"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// defaultStopTimeout is Options.StopTimeout's zero value.
const defaultStopTimeout = 10 * time.Second

// stopWhenDone stops the loop, then the scheduler it commits to, once ctx
// ends; both within Options.StopTimeout. A clean stop calls done before
// Wait returns: it unbinds the registration from the factory and releases
// its field manager and condition, so that a registration made once Wait
// returned may take them, and none made while this one still runs a
// handler or commits. One with an error stays bound, so that the
// factory's Run or Wait reports it (a handler still running keeps the
// Lease), and keeps them while what still runs may yet act: until the
// loop and the scheduler have exited, when done frees them. Kept for
// good, they would stop the process from ever registering the field
// manager again (a later term under leader election).
func (d *Dependents) stopWhenDone(ctx context.Context, opts Options, done func()) {
	<-ctx.Done()
	timeout := opts.StopTimeout
	if timeout <= 0 {
		timeout = defaultStopTimeout
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	// The loop's Stop is bounded by stopCtx even when a handler does not
	// return; the scheduler is closed then anyway, so that the handler's
	// transaction, once it returns, commits nothing.
	err := d.loop.Stop(stopCtx)
	d.stopErr = d.stillRunning(timeout, errors.Join(err, d.sched.Close()))
	if d.stopErr == nil {
		done()
	}
	close(d.done)
	if d.stopErr != nil {
		<-d.loop.Exited()
		<-d.sched.Exited()
		done()
	}
}

// stillRunning returns err, as a *controller.StillRunningError
// (errors.Is(err, controller.ErrStillRunning)) naming what still runs when
// the loop or the scheduler did not stop within timeout: on it, a term
// under leader election or sharding leaves its Lease to expire instead of
// releasing it, as for a factory's handlers.
func (d *Dependents) stillRunning(timeout time.Duration, err error) error {
	var still []controller.RunningHandler
	var loopErr *eventloop.StillRunningError
	if errors.As(err, &loopErr) {
		still = append(still, controller.RunningHandler{GVK: d.ownerKind, Key: loopErr.Event,
			Handler: "dependents " + d.name + " " + loopErr.Handler, Since: loopErr.Since})
	}
	if errors.Is(err, kvscheduler.ErrCloseTimeout) {
		still = append(still, controller.RunningHandler{GVK: d.ownerKind, Key: "-",
			Handler: "dependents " + d.name + " scheduler", Since: time.Now()})
	}
	if len(still) == 0 {
		return err
	}
	return errors.Join(&controller.StillRunningError{Grace: timeout, Handlers: still}, err)
}

// Wait returns once the registration has stopped (its context ended and
// the loop and the scheduler stopped, within Options.StopTimeout), or ctx
// ends; with the error of stopping them. A handler or scheduler call still
// running after Options.StopTimeout makes it a *controller.StillRunningError
// naming it (errors.Is(err, controller.ErrStillRunning)).
func (d *Dependents) Wait(ctx context.Context) error {
	select {
	case <-d.done:
		return d.stopErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
