package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/generated/controllers/core"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// Operator is a WebApp operator (see the package documentation). Build it
// with New, then Run it.
type Operator struct {
	opts     Options
	log      *logrus.Logger
	factory  *generic.Factory
	webapps  democtl.WebAppController
	services generic.CacheInterface[*corev1.Service]
	sched    *kvscheduler.Scheduler
	bridge   *kubebridge.Bridge
	loop     *eventloop.Loop
	registry *prometheus.Registry
	mux      *http.ServeMux
	notes    *notices
	// runCtx is Run's context, set before the loop starts: the loop's
	// handlers commit repairs to the scheduler under it.
	runCtx context.Context
}

// New builds the operator; it makes no request to the API server.
func New(opts Options) (*Operator, error) {
	if opts.Config == nil {
		return nil, errors.New("webapp operator: Options.Config is required")
	}
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	if opts.NodePorts == (PortRange{}) {
		opts.NodePorts = DefaultPortRange()
	}
	if opts.NodePorts.First <= 0 || opts.NodePorts.Last < opts.NodePorts.First || opts.NodePorts.Last > 65535 {
		return nil, fmt.Errorf("webapp operator: node port range %d-%d is not a range of ports", opts.NodePorts.First, opts.NodePorts.Last)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = DefaultSyncTimeout
	}
	if opts.Logger == nil {
		opts.Logger = logrus.StandardLogger()
	}
	if opts.EventLoop == nil {
		cfg := DefaultEventLoopConfig()
		opts.EventLoop = &cfg
	}
	o := &Operator{opts: opts, log: opts.Logger, registry: opts.Registry, notes: &notices{}}
	if o.registry == nil {
		o.registry = prometheus.NewRegistry()
		o.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}

	// Only the objects the operator manages are cached and fed to the
	// loop: a cluster's other ConfigMaps are none of its business.
	managed := cache.KindOptions{LabelSelector: ptr.To(labels.Set{kubedescriptor.LabelManagedBy: opts.FieldManager}.String())}
	f, err := generic.NewFactoryFromConfig(opts.Config, nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{
			SyncTimeout: opts.SyncTimeout,
			Default:     cache.Options{Namespace: opts.Namespace},
			Kinds:       map[schema.GroupVersionKind]cache.KindOptions{configMapKind: managed, deploymentKind: managed, serviceKind: managed},
		},
		Controller: controller.SharedControllerFactoryOptions{Logger: opts.Logger, Registerer: o.registry, Passes: opts.Passes},
	})
	if err != nil {
		return nil, err
	}
	o.factory = f
	if err := o.buildControllers(); err != nil {
		return nil, err
	}
	if err := o.buildScheduler(); err != nil {
		return nil, err
	}
	if err := o.buildLoop(); err != nil {
		return nil, err
	}
	if err := o.buildMux(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Operator) buildControllers() error {
	demoFactory, err := demo.NewFactory(o.factory)
	if err != nil {
		return err
	}
	if o.webapps, err = demoFactory.Demo().V1().WebApp(); err != nil {
		return err
	}
	coreFactory, err := core.NewFactory(o.factory)
	if err != nil {
		return err
	}
	services, err := coreFactory.Core().V1().Service()
	if err != nil {
		return err
	}
	o.services = services.Cache()
	return nil
}

func (o *Operator) buildScheduler() error {
	// The reference's boxes: `make run RUN_FLAGS=--log-level=debug` shows
	// every transaction in full.
	s, err := kvscheduler.New(kvscheduler.Options{Name: "webapp", Logger: o.log, Registerer: o.registry, TxnLogFormat: kvscheduler.TxnLogBoxes})
	if err != nil {
		return err
	}
	o.sched = s
	caches := o.factory.ControllerFactory().SharedCacheFactory()
	for _, k := range []schema.GroupVersionKind{configMapKind, deploymentKind, serviceKind} {
		d, err := kubedescriptor.New(k, kubedescriptor.Options{
			Clients: caches.SharedClientFactory(), Cache: caches,
			FieldManager: o.opts.FieldManager, Namespace: o.opts.Namespace,
			// The requests of the descriptor's callbacks end with their
			// transaction's context; the dry runs its value comparator
			// makes for objects applied before a restart end with the
			// scheduler's.
			Context: s.Context(),
		})
		if err != nil {
			return err
		}
		if err := s.RegisterDescriptor(s.Context(), d); err != nil {
			return err
		}
	}
	return s.RegisterDescriptor(s.Context(), availabilityDescriptor())
}

func (o *Operator) buildLoop() error {
	opts := eventloop.Options{
		Config:   o.opts.EventLoop,
		Handlers: newHandlers(o.notes, o.sched, o.repair, o.opts.NodePorts, o.opts.WaitForPods, o.log),
		// An object the API server rejects is that WebApp's problem, shown
		// in its status; it must not make the loop heal and abort.
		Committer:  loopcommit.New(o.sched),
		Logger:     logrus.NewEntry(o.log),
		Registerer: o.registry,
		Name:       "webapp",
	}
	o.bridge = kubebridge.New(o.factory.ControllerFactory(), o.log)
	o.bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		return err
	}
	o.loop = loop
	return nil
}

// newHandlers returns the loop's handlers. The order is the point: each
// reads what the ones before it know or put into the transaction.
// They stay on this hand wiring rather than on pkg/dependents (see
// docs/dependents.md, "The WebApp operator on this API"): the port
// allocator decides across WebApps (a resync gives every live Service's
// port back before any new one; a freed or evicted port changes another
// WebApp's Service), which a handler computed per owner cannot, and the
// children go with it, since a joined registration takes over the
// descriptors of their three kinds.
// states is the scheduler's view of the values and repair its scoped
// repair (both nil in handler tests, which have no scheduler).
func newHandlers(notes *notices, states valueStates, repair repairer, r PortRange, waitForPods bool, log logrus.FieldLogger) []eventloop.EventHandler {
	inv := newInventory()
	p := newPorts(inv, notes, r, log)
	config := &builder{name: "config-renderer", verb: "rendered", inv: inv, key: ConfigMapKey,
		build: func(_ eventloop.ResyncOperations, app *demov1.WebApp) runtime.Object {
			return renderConfigMap(inv, app)
		}}
	workload := &builder{name: "workload-builder", verb: "built", inv: inv, key: DeploymentKey, build: buildDeployment}
	return []eventloop.EventHandler{inv, p, config, workload, &availability{inv: inv, ports: p, states: states, repair: repair, waitForPods: waitForPods}}
}

// repair is the availability handler's repairer: a downstream resync of
// the scheduler scoped to keys. Values that fail again stay FAILED or
// RETRYING with their retries (as with loopcommit's default); a repair
// that could not read the cluster is an error, which makes the loop heal.
func (o *Operator) repair(keys []string) (uint64, error) {
	if o.runCtx == nil {
		return 0, errors.New("webapp operator: repair before Run")
	}
	rec, err := o.sched.StartNBTransaction().WithDescription("repair " + strings.Join(keys, ", ")).
		WithResync(kvscheduler.DownstreamResync).WithResyncKeys(keys...).Commit(o.runCtx)
	var seq uint64
	if rec != nil {
		seq = rec.SeqNum
	}
	var failed *kvscheduler.TransactionError
	if errors.As(err, &failed) && failed.OnlyFailedValues() || o.runCtx.Err() != nil {
		// Failed values keep their retries; a repair cut short by the
		// operator stopping is no failure of the loop's (it would log
		// one while shutting down).
		err = nil
	}
	return seq, err
}

// Scheduler returns the operator's KV scheduler.
func (o *Operator) Scheduler() *kvscheduler.Scheduler { return o.sched }

// Loop returns the operator's event loop.
func (o *Operator) Loop() *eventloop.Loop { return o.loop }

// WebApps returns the WebApp controller, for handlers of one's own.
func (o *Operator) WebApps() democtl.WebAppController { return o.webapps }

// Registry returns the registry holding the operator's metrics.
func (o *Operator) Registry() *prometheus.Registry { return o.registry }

// Run starts the operator and blocks until ctx ends, then returns once its
// work has stopped: the controllers' handlers returned, then the event loop
// and the scheduler stopped. It returns an error if the operator cannot
// start or its event loop aborts, and one matching
// controller.ErrStillRunning if a handler or a scheduler call was still
// running after its grace period (under leader election the lease is then
// left to expire). A missing WebApp CRD is not fatal: it is logged, and
// WebApps are handled once the CRD is installed.
func (o *Operator) Run(ctx context.Context) (err error) {
	// Whichever way Run returns, what it started stops before it does.
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	o.runCtx = ctx
	// The status handler's own writes are not news to the loop: WebApp
	// updates reach it only when more than the status changed. The
	// children's updates all do, the Deployment's status included.
	if err := o.bridge.Watch(ctx, &demov1.WebApp{}, kubebridge.WithPredicate(kubebridge.GenerationChanged)); err != nil {
		return err
	}
	for _, obj := range []runtime.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}} {
		if err := o.bridge.Watch(ctx, obj); err != nil {
			return err
		}
	}
	if err := o.watchDependents(ctx); err != nil {
		return err
	}
	r := &reporter{sched: o.sched, webapps: o.webapps.Cache(), services: o.services, notes: o.notes, waitForPods: o.opts.WaitForPods}
	// No condition for the generic machinery to set from an error: the
	// reporter sets Ready itself, since waiting is not an error.
	democtl.RegisterWebAppStatusHandler(ctx, o.webapps, "", "status", r.status)
	go o.enqueueOnStatusChange(ctx)

	if err := o.loop.Start(ctx); err != nil {
		return err
	}
	var controllersStarted chan struct{} // closed when Start returned
	defer func() {
		cancelRun()
		if stopErr := o.stop(ctx, controllersStarted); err == nil {
			err = stopErr
		}
	}()
	// The informers start first, so that the controllers' wait for their
	// sync (in the background) and the bridge's overlap: kinds that cannot
	// sync cost one SyncTimeout, not two.
	if err := o.factory.ControllerFactory().SharedCacheFactory().Start(ctx); err != nil {
		return err
	}
	controllers := make(chan error, 1)
	controllersStarted = make(chan struct{})
	go func() {
		defer close(controllersStarted)
		controllers <- o.factory.Start(ctx, o.opts.Workers)
	}()
	// The bridge holds the loop's startup resync until every kind it
	// watches has synced (a WebApp kind that cannot be listed must not
	// look like "no WebApps", which would delete every child); the
	// controllers and endpoints run meanwhile.
	bridge := make(chan error, 1)
	go func() { bridge <- o.bridge.Start(ctx, o.loop) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-o.loop.Exited():
			return fmt.Errorf("webapp operator: the event loop stopped: %w", o.loop.Health())
		case err := <-bridge:
			if err != nil && ctx.Err() == nil {
				return err
			}
		case err := <-controllers:
			var syncErr *cache.SyncError
			if err != nil && (!errors.As(err, &syncErr) || ctx.Err() != nil) {
				return err
			}
			if err != nil {
				o.log.WithError(err).Warn("webapp operator: some kinds are not served yet (is the WebApp CRD installed? kubectl apply -f crds/); going on without them")
			}
		}
	}
}
