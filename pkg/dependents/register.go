package dependents

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// DefaultCondition is the owner condition Register sets when
// Options.Condition is empty.
const DefaultCondition condition.Cond = "Ready"

// Options configure a registration. FieldManager and Kinds are required.
type Options struct {
	// FieldManager owns the applied fields of the objects and labels them
	// (kubedescriptor.LabelManagedBy); objects without its label are never
	// taken over. Two registrations must not share it: each would read the
	// other's objects as its leftovers and delete them. A second
	// registration on one factory (Register or Join) naming a field
	// manager another holds is refused, until that one stopped (its Wait
	// returned nil; not when its context ended, while a handler may still
	// run; after a stop that timed out, once its loop and scheduler
	// exited); registrations of other factories or processes cannot be
	// seen, so never share one across them.
	FieldManager string
	// Kinds are the kinds of the objects the handler returns.
	Kinds []schema.GroupVersionKind
	// Namespace limits the scheduler's reads of the objects to one
	// namespace; empty means all. Owners in other namespaces are refused
	// (their condition says so): their objects could not be read back.
	Namespace string
	// Condition is the owner condition that says what is ready, pending
	// and failed; empty means DefaultCondition.
	Condition condition.Cond
	// Logger receives the logs; nil means logrus' standard logger.
	Logger *logrus.Logger
	// EventLoop tunes the event loop; nil means DefaultEventLoopConfig().
	EventLoop *eventloop.Config
	// TxnLogFormat is how the scheduler logs its transactions (at debug):
	// kvscheduler.TxnLogLine (empty means it) or kvscheduler.TxnLogBoxes.
	TxnLogFormat string
	// Registerer receives the metrics of the loop and the scheduler; nil
	// means none.
	Registerer prometheus.Registerer
	// StopTimeout bounds how long the loop and the scheduler may take to
	// stop once the registration's context ends; zero means 10 s. A
	// handler still running after it is logged, counted
	// (lariat_eventloop_outlived_stop_total, with a Registerer) and named
	// in Wait's error (errors.Is(err, controller.ErrStillRunning)).
	StopTimeout time.Duration
	// RepairDrift repairs at once an object changed behind the
	// registration's back (its live object no longer equivalent to what
	// was applied, kubedescriptor.Equivalent), as one deleted is: a
	// downstream resync of its key. Off, such drift waits for the
	// periodic healing (EventLoop). On, a field another manager keeps
	// changing that the handler also sets (an autoscaler's replicas) is
	// applied back on each change: leave such fields out of the objects.
	RepairDrift bool
	// Status, when set, writes the owner's own status fields from its
	// summary, after the condition is set: a StatusFunc[T, S] (or a func
	// of that signature) of Register's owner and status types. Register
	// returns an error for any other type (Options is not generic, so
	// that every generated Register<Kind>Dependents shares it).
	Status any
}

// StatusFunc writes the status fields of owner from s, the summary its
// condition was set from (Known false while the owner's generation is not
// computed yet). It runs in the owner's status handler, whose write of
// status is one update of the status subresource; it must not keep status
// or owner. It runs for an owner being deleted too (a deletionTimestamp,
// held by finalizers), unlike a wrangler status handler, so that its
// status says what its deletion waits for.
type StatusFunc[T any, S any] func(owner T, s Summary, status *S)

// DefaultEventLoopConfig is eventloop.DefaultConfig with one line per
// event at debug level, and periodic healing every minute: a downstream resync in which the scheduler re-reads the
// objects, re-applies what drifted or was deleted behind its back, and
// tries again what failed for good.
func DefaultEventLoopConfig() eventloop.Config {
	cfg := eventloop.DefaultConfig()
	// Quiet by default: one line per event at debug (set EventLogFormat
	// to eventloop.EventLogBoxes and EventLogLevel to info for the seed's
	// boxes); the handler logs a line at info when an owner's readiness
	// changes.
	cfg.EventLogLevel = logrus.DebugLevel
	cfg.EventLogFormat = eventloop.EventLogLine
	cfg.EnablePeriodicHealing = true
	cfg.PeriodicHealingInterval = eventloop.Duration{Duration: time.Minute}
	return cfg
}

// Owners is what a registration needs of the owner kind's typed
// controller; generated controllers of namespaced kinds have it.
type Owners[T generic.RuntimeMetaObject] interface {
	generic.StatusController[T]
	// Enqueue runs the owner's handlers again (its status).
	Enqueue(namespace, name string)
}

// Dependents is a running registration: an event loop and a KV scheduler
// that keep every owner's objects, in order.
type Dependents struct {
	name      string
	k         keys
	ownerKind string
	sched     *kvscheduler.Scheduler
	loop      *eventloop.Loop
	reports   *reports
	ownsLoop  bool            // Register's own loop and scheduler, stopped with it; false when joined (Join)
	fails     *failWatch      // the keys whose failure a handler read (View.Failure)
	cycles    *cycleLog       // the cycles between owners logged (see ownercycle.go)
	unsynced  func() []string // the kinds the loop's startup resync waits for (nil when joined)
	log       logrus.FieldLogger
	done      chan struct{}
	stopErr   error
}

// Register runs handler for every owner of owners' kind, and keeps the
// objects it returns: created in dependency order once what they wait for
// is ready, deleted in reverse order when the owner or the object goes,
// and summed up in the owner's status condition (Options.Condition) when
// access reaches its conditions. It starts an event loop and a KV
// scheduler with the Kubernetes descriptor of each of Options.Kinds; the
// factory's Start (called after Register, as for any handler) starts the
// informers they read. Everything stops when ctx ends; Wait waits for it,
// and so do the factory's Run and Wait once ctx ended (generic.Factory.Bind):
// a term function `return f.Run(ctx, 2)` returns only once the loop's
// handler returned.
func Register[T generic.RuntimeMetaObject, S any](ctx context.Context, factory *generic.Factory, owners Owners[T],
	access generic.StatusAccess[T, S], name string, handler Handler[T], opts Options) (*Dependents, error) {
	if handler == nil {
		return nil, errors.New("dependents: factory, owners, name and handler are required")
	}
	return RegisterView(ctx, factory, owners, access, name, func(owner T, _ View[T]) ([]*Object, error) {
		return handler(owner)
	}, opts)
}

// RegisterView is Register for a handler that reads the other owners and
// the live objects through a View, in the loop's order; it is computed
// again when what it read changes.
func RegisterView[T generic.RuntimeMetaObject, S any](ctx context.Context, factory *generic.Factory, owners Owners[T],
	access generic.StatusAccess[T, S], name string, handler ViewHandler[T], opts Options) (_ *Dependents, err error) {
	if err := checkArgs(factory, owners, name, handler, &opts); err != nil {
		return nil, err
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
	sched, err := newScheduler(factory, name, opts, newKeys(name), sb)
	if err != nil {
		return nil, err
	}
	r, err := prepare(factory, owners, access, name, handler, opts, sched, sb)
	if err != nil {
		return nil, errors.Join(err, sched.Close())
	}
	r.d.ownsLoop = true
	bridge := kubebridge.New(factory.ControllerFactory(), opts.Logger)
	if err := r.watch(ctx, bridge); err != nil {
		return nil, r.d.closeWith(err)
	}
	cfg := opts.EventLoop
	if cfg == nil {
		c := DefaultEventLoopConfig()
		cfg = &c
	}
	lo := eventloop.Options{Config: cfg, Handlers: []eventloop.EventHandler{r.h}, Committer: loopcommit.New(sched),
		Logger: logrus.NewEntry(opts.Logger), Registerer: opts.Registerer, Name: name}
	bridge.Configure(&lo)
	d := r.d
	d.unsynced = bridge.Unsynced
	if d.loop, err = eventloop.New(lo); err != nil {
		return nil, d.closeWith(err)
	}
	r.h.loop.Store(d.loop)
	registerStatus(ctx, d, owners, access, opts.Condition, name, r.hook)
	if err := d.loop.Start(ctx); err != nil {
		return nil, d.closeWith(err)
	}
	go d.watchStates(ctx, owners)
	go func() {
		if err := bridge.Start(ctx, d.loop); err != nil && ctx.Err() == nil {
			opts.Logger.WithError(err).Errorf("dependents %s: the startup resync was not pushed", name)
		}
	}()
	// The factory's Run and Wait wait for the loop's stop once ctx ended,
	// so that a term ending with `return f.Run(ctx, 2)` outlives the
	// loop's handler, not only the factory's.
	unbind := factory.Bind(ctx, d.Wait)
	go d.stopWhenDone(ctx, opts, func() { unbind(); release() })
	return d, nil
}

// waitingNote says, for an owner not computed yet, which kinds the
// registration's first resync still waits for: a kind whose CRD is not
// established yet (an operator deployed before its CRDs), or that cannot
// be listed. The loop waits for them, however long past its startup
// deadline (eventloop.Options.StartupWaitingFor), rather than read a kind
// it has not listed as empty; the owner's condition says so, not only the
// loop's health and log.
func (d *Dependents) waitingNote() string {
	if d.unsynced == nil {
		return ""
	}
	w := d.unsynced()
	if len(w) == 0 {
		return ""
	}
	return fmt.Sprintf(": waiting for %s to be listed (a CustomResourceDefinition not established yet, or a kind that cannot be listed)",
		strings.Join(w, ", "))
}

// newScheduler returns a scheduler with the Kubernetes descriptor of each
// kind and the markers' descriptor.
func newScheduler(factory *generic.Factory, name string, opts Options, k keys, sb southbound) (*kvscheduler.Scheduler, error) {
	s, err := kvscheduler.New(kvscheduler.Options{Name: name, Logger: opts.Logger, Registerer: opts.Registerer,
		TxnLogFormat: opts.TxnLogFormat})
	if err != nil {
		return nil, err
	}
	if err := registerDescriptors(s, factory, name, opts, k, sb); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// registerDescriptors registers on s the Kubernetes descriptor of each of
// opts.Kinds, sharing sb, and the markers' descriptor of the registration
// name.
func registerDescriptors(s *kvscheduler.Scheduler, factory *generic.Factory, name string, opts Options, k keys, sb southbound) error {
	caches := factory.ControllerFactory().SharedCacheFactory()
	for _, gvk := range opts.Kinds {
		d, err := kubedescriptor.New(gvk, kubedescriptor.Options{Clients: caches.SharedClientFactory(), Cache: caches,
			FieldManager: opts.FieldManager, Namespace: opts.Namespace, Context: s.Context(), Landings: sb.landings})
		if err == nil {
			sb.held.wrap(d)
			err = s.RegisterDescriptor(s.Context(), d)
		}
		if err != nil {
			return fmt.Errorf("dependents %s: kind %s: %w", name, gvk, err)
		}
	}
	return s.RegisterDescriptor(s.Context(), k.markerDescriptor(name))
}

// closeWith closes the scheduler of a registration that could not start
// (only its own: a joined registration's scheduler is the user's).
func (d *Dependents) closeWith(err error) error {
	err = fmt.Errorf("dependents %s: %w", d.name, err)
	if !d.ownsLoop {
		return err
	}
	return errors.Join(err, d.sched.Close())
}

// Scheduler returns the registration's KV scheduler (for its HTTP
// introspection, say).
func (d *Dependents) Scheduler() *kvscheduler.Scheduler { return d.sched }

// Loop returns the registration's event loop.
func (d *Dependents) Loop() *eventloop.Loop { return d.loop }

// Summary returns the state of the dependents of the owner at namespace
// and name, as its status condition says it.
func (d *Dependents) Summary(namespace, name string) Summary {
	return d.summarize(ownerKey(namespace, name))
}

// watchStates re-runs the status of an owner whenever the scheduler
// changes the state of one of its objects.
func (d *Dependents) watchStates(ctx context.Context, owners interface{ Enqueue(string, string) }) {
	w := d.sched.WatchValueStatus(ctx, func(key string) bool { return !d.k.isMarker(key) })
	defer w.Close()
	for st := range w.C() {
		if owner, ok := d.reports.ownerOf(st.Key); ok {
			enqueue(owners, owner)
		}
		d.pushFailureChange(ctx, st.Key)
	}
}

func enqueue(owners interface{ Enqueue(string, string) }, key string) {
	ns, name := splitOwnerKey(key)
	owners.Enqueue(ns, name)
}

// statusHook returns Options.Status as a StatusFunc of the owner's types,
// nil when unset.
func statusHook[T any, S any](status any) (StatusFunc[T, S], error) {
	switch f := status.(type) {
	case nil:
		return nil, nil
	case StatusFunc[T, S]:
		return f, nil
	case func(T, Summary, *S):
		return f, nil
	}
	var t T
	var s S
	return nil, fmt.Errorf("dependents: Options.Status is a %T, not a func(%T, dependents.Summary, *%T)", status, t, s)
}

// registerStatus sets cond on every owner from its summary, then runs hook.
func registerStatus[T generic.RuntimeMetaObject, S any](ctx context.Context, d *Dependents, owners Owners[T],
	access generic.StatusAccess[T, S], cond condition.Cond, name string, hook StatusFunc[T, S]) {
	if access.Get == nil || access.Set == nil || access.Conditions == nil && access.SetCondition == nil && hook == nil {
		return
	}
	// An owner being deleted (held by finalizers) has its condition
	// rewritten too: it says what its objects wait for, and that it is
	// being deleted (docs/dependents.md).
	opts := generic.StatusOptions{WhileDeleting: true}
	generic.RegisterStatusHandlerWith(ctx, owners, access, "", name+"-status", opts, func(obj T, status S) (S, error) {
		s := d.summarize(ownerKey(obj.GetNamespace(), obj.GetName()))
		gen := obj.GetGeneration()
		msg := s.Message()
		if s.Known && (s.Generation < gen || s.UID != obj.GetUID()) {
			// The status handler runs on the owner's own update, before the
			// loop may have computed its new spec: what the summary says is
			// of an older generation, or of an owner deleted and created
			// again under this name (another UID, whose generation may be
			// the same), and stamping it with this one would say Ready for
			// objects never applied. The loop's report of this owner
			// enqueues it again.
			s = Summary{}
			msg = fmt.Sprintf("generation %d not computed yet", gen)
		}
		if !s.Known {
			msg += d.waitingNote()
		}
		if access.Conditions != nil {
			st, reason := metav1.ConditionFalse, "Pending"
			switch {
			case s.AllReady():
				st, reason = metav1.ConditionTrue, "Ready"
			case len(s.Failed) > 0:
				reason = "Failed"
			case !s.Known:
				st = metav1.ConditionUnknown
			}
			cond.Set(access.Conditions(&status), st, gen, reason, msg)
		} else if access.SetCondition != nil {
			var err error
			if !s.AllReady() {
				err = errors.New(msg)
			}
			access.SetCondition(&status, cond, gen, err)
		}
		if hook != nil {
			hook(obj, s, &status)
		}
		return status, nil
	})
}
