package dependents

import (
	"context"
	"errors"
	"sync"

	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Host is an event loop and a KV scheduler the user runs, which a
// registration joins (Join) instead of starting its own.
type Host struct {
	// Bridge feeds the user's loop; Join has it watch the owner kind and
	// every kind of Options.Kinds (a kind it watches already is shared:
	// the loop gets the updates either watch asks for). The user
	// configures the loop options with it (Bridge.Configure) and starts
	// it (Bridge.Start) as usual.
	Bridge *kubebridge.Bridge
	// Scheduler is the scheduler the loop commits to (through
	// Loop.Committer, loopcommit.New of it); Join registers on it the
	// Kubernetes descriptor of each of Options.Kinds, which must have none
	// yet, and the registration's markers' descriptor.
	Scheduler *kvscheduler.Scheduler
	// Loop are the options the user passes to eventloop.New; Join appends
	// the registration's handler to Loop.Handlers.
	Loop *eventloop.Options
}

// Joining is a registration that joined a Host and waits for its loop:
// Start it with the loop once eventloop.New returned it.
type Joining[T generic.RuntimeMetaObject, S any] struct {
	r       *registration[T, S]
	access  generic.StatusAccess[T, S]
	cond    condition.Cond
	started sync.Once
	release func() // the reservations, given up once the registration stopped
}

// Join is RegisterView on a loop and a scheduler the user runs. The loop
// takes its handlers at construction, so the registration is split in
// two: call Join before eventloop.New (host.Loop are the options passed
// to it), then Joining.Start with the loop. Join watches the kinds on
// host.Bridge, registers the descriptors on host.Scheduler and appends the
// registration's handler to host.Loop.Handlers; every owner's objects are
// then values of the user's scheduler, put in the user's loop's
// transactions alongside those of the user's other handlers (a full
// resync carries them all). Options.EventLoop, TxnLogFormat, Registerer
// and StopTimeout are not used: the loop, the scheduler and their
// stopping are the user's. An error may leave descriptors registered on
// host.Scheduler and kinds watched on host.Bridge, but no handler in
// host.Loop: the user's setup fails with it.
func Join[T generic.RuntimeMetaObject, S any](ctx context.Context, factory *generic.Factory, owners Owners[T],
	access generic.StatusAccess[T, S], name string, handler ViewHandler[T], opts Options, host Host) (_ *Joining[T, S], err error) {
	if err := checkArgs(factory, owners, name, handler, &opts); err != nil {
		return nil, err
	}
	if host.Bridge == nil || host.Scheduler == nil || host.Loop == nil || host.Loop.Committer == nil {
		return nil, errors.New("dependents: Host.Bridge, Host.Scheduler and Host.Loop (with its Committer) are required")
	}
	release, err := reserve(factory, owners, access, name, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	sb := newSouthbound()
	r, err := prepare(factory, owners, access, name, handler, opts, host.Scheduler, sb)
	if err != nil {
		return nil, err
	}
	if err := registerDescriptors(host.Scheduler, factory, name, opts, r.d.k, sb); err != nil {
		return nil, err
	}
	if err := r.watch(ctx, host.Bridge); err != nil {
		return nil, r.d.closeWith(err)
	}
	host.Loop.Handlers = append(host.Loop.Handlers, r.h)
	return &Joining[T, S]{r: r, access: access, cond: opts.Condition, release: release}, nil
}

// Start starts what the registration runs beside the user's loop, the
// owners' status handler and the watch of the scheduler's states, until
// ctx ends; call it with the loop built from Host.Loop, before the
// factory's Start. Stopping the loop and the scheduler stays the user's;
// Dependents.Wait returns once ctx ended and the watch stopped. The
// registration's field manager and condition stay reserved on the factory
// until the loop has exited: its handler and descriptors act in that loop
// until then.
func (j *Joining[T, S]) Start(ctx context.Context, loop *eventloop.Loop) (*Dependents, error) {
	if loop == nil {
		return nil, errors.New("dependents: Joining.Start needs the loop")
	}
	err := errors.New("dependents: Joining.Start called twice")
	j.started.Do(func() { err = nil })
	if err != nil {
		return nil, err
	}
	d := j.r.d
	d.loop = loop
	j.r.h.loop.Store(loop)
	registerStatus(ctx, d, j.r.owners, j.access, j.cond, d.name, j.r.hook)
	go func() {
		// The user's scheduler may outlive the loop, and no transaction of
		// the loop computes the stale owners once it exited.
		<-loop.Exited()
		j.r.h.retryHold.set(d.sched, false)
	}()
	go func() {
		d.watchStates(ctx, j.r.owners)
		close(d.done)
		// The handler and the descriptors stay in the user's loop and
		// scheduler, which may still commit (a resync re-applies the
		// registration's objects): the field manager and condition are
		// free only once that loop has exited, or a registration made
		// meanwhile would write the same objects.
		<-loop.Exited()
		j.release()
	}()
	return d, nil
}
