package controller

import (
	"context"
	"errors"
	"time"

	"github.com/lariat-dev/lariat/pkg/cache"
)

// Run starts the factory's informers and controllers with ctx (see Start),
// blocks until ctx ends, and returns only once the run has stopped: every
// handler call of it has returned, and every informer has stopped
// delivering events (see Wait). It is the whole of a term function under
// leader election or sharding:
//
//	leader.Run(ctx, leases, ns, name, func(ctx context.Context) error {
//		return f.Run(ctx, 2)
//	})
//
// A kind that does not sync within the sync timeout (its CRD is missing,
// RBAC forbids listing it) does not end the run: it is logged at warning
// level by name, with its last list error, and its informer keeps trying;
// its controller starts once it synced, while the other kinds run (their
// handlers get a *cache.NotSyncedError, never NotFound, from its cache).
// Ending the run for it would end a leader's or member's term, hand the
// work to a replica that cannot list the kind either, and stop every
// kind that works. If Start fails otherwise while ctx is live, Run stops
// what it started, waits for it the same way, and returns Start's error;
// a ctx that ended is no error. Handlers
// still running after the stop grace period (StopGrace) make Run return a
// *StillRunningError naming them (errors.Is(err, ErrStillRunning)), on
// which pkg/leader and pkg/shard keep their Lease instead of releasing it.
func (f *SharedControllerFactory) Run(ctx context.Context, defaultWorkers int) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := f.Start(runCtx, defaultWorkers)
	var unsynced *cache.SyncError
	if errors.As(err, &unsynced) && ctx.Err() == nil {
		f.log.WithError(err).Warn("controller: kinds not synced yet; they keep being listed, and their controllers start once they have synced")
		err = nil
	}
	if err == nil {
		<-ctx.Done()
	}
	if ctx.Err() != nil {
		// Start's error, if any, is the stop itself (a sync cut short).
		err = nil
	}
	cancel()
	// The wait is bounded by the grace period, not by ctx, which ended.
	return errors.Join(err, f.Wait(context.WithoutCancel(ctx)))
}

// Wait blocks until every run begun by Start has stopped: its context
// ended, every controller's handler calls returned and every informer
// stopped delivering events. While a run's context is live, Wait waits for
// it to end. Handlers still running once the stop grace period
// (SharedControllerFactoryOptions.StopGrace) after their run's end has
// passed are logged by kind, key and handler and counted in
// lariat_handlers_outlived_stop_grace_total, and Wait returns a
// *StillRunningError naming them; informers still delivering by then are
// named in a *cache.StillRunningError. Wait returns ctx's error if ctx ends
// first.
func (f *SharedControllerFactory) Wait(ctx context.Context) error {
	f.mu.Lock()
	controllers := make([]*sharedController, 0, len(f.controllers))
	for _, c := range f.controllers {
		controllers = append(controllers, c)
	}
	f.mu.Unlock()
	var still []RunningHandler
	grace := f.stopGrace()
	for _, c := range controllers {
		s, err := c.wait(ctx)
		if err != nil {
			return err
		}
		still = append(still, s...)
	}
	// Informers stop as soon as their handlers return: the controllers'
	// enqueue at once, so only handlers added to informers directly can
	// keep them; they get the same grace, counted from here.
	cacheCtx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	cacheErr := f.caches.Wait(cacheCtx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f.carry(controllers)
	if len(still) > 0 {
		sortRunning(still)
		return errors.Join(&StillRunningError{Grace: grace, Handlers: still}, cacheErr)
	}
	return cacheErr
}

// carry hands the keys the stopped controllers held, and whose end their
// handlers were not told of, to the replica's next factory (see
// CarriedDeletions).
func (f *SharedControllerFactory) carry(controllers []*sharedController) {
	if f.opts.CarriedDeletions == nil {
		return
	}
	for _, c := range controllers {
		if c.controller.opts.HeldDeletion != nil {
			f.opts.CarriedDeletions.put(c.gvk, c.controller.known.heldKeys(c.controller.opts.HeldDeletion))
		}
	}
}

// stopGrace is the grace period the factory's controllers get.
func (f *SharedControllerFactory) stopGrace() time.Duration {
	if f.opts.StopGrace > 0 {
		return f.opts.StopGrace
	}
	return DefaultStopGrace
}
