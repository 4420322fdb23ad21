package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/generated/controllers/core"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// DefaultSyncTimeout is the default of Options.SyncTimeout: long enough for
// a cluster's lists, short enough that one missing CRD does not keep the
// operator idle for minutes.
const DefaultSyncTimeout = 10 * time.Second

// DefaultFieldManager owns the applied fields of the operator's objects and
// labels them (kubedescriptor.LabelManagedBy).
const DefaultFieldManager = "webapp-operator"

// Options configure an Operator. Only Config is required.
type Options struct {
	// Config reaches the cluster.
	Config *rest.Config
	// Namespace limits the operator to one namespace; empty means all.
	Namespace string
	// FieldManager is the server-side apply field manager and the value of
	// the management label; empty means DefaultFieldManager. Two operators
	// on one cluster must not share it.
	FieldManager string
	// NodePorts is the range node ports are allocated from; the zero value
	// means DefaultPortRange(). It must lie within the API server's
	// --service-node-port-range.
	NodePorts PortRange
	// WaitForPods makes a WebApp available only once its Deployment's
	// controller reports all replicas available; otherwise the objects
	// existing is enough. Set it on clusters with a controller manager and
	// nodes; leave it off on Lariat's bundled control plane, where no pod
	// ever runs.
	WaitForPods bool
	// SyncTimeout bounds how long Run waits for the caches before it goes
	// on without the kinds that have not synced (the WebApp CRD is not
	// installed, RBAC forbids listing a kind): those are logged, and join
	// once they can be listed. Zero means DefaultSyncTimeout.
	SyncTimeout time.Duration
	// Workers is the number of workers per kind; 0 means 2.
	Workers int
	// Registry receives the metrics of the controllers, the event loop and
	// the scheduler; nil means a new registry with the Go and process
	// collectors.
	Registry *prometheus.Registry
	// Logger receives the operator's logs; nil means logrus' standard
	// logger.
	Logger *logrus.Logger
	// EventLoop tunes the event loop; nil means DefaultEventLoopConfig().
	EventLoop *eventloop.Config
	// Passes, under leader election, is the Elector's PassTracker
	// (leader.Elector.PassTracker): with Config from its Fence, the
	// handlers' writes of the objects they handle are then conditional on
	// the copy they were given, so a write delayed past the term fails
	// with a conflict instead of landing after the next leader's.
	Passes controller.PassTracker
	// Replicas, when set, tells the dashboard's replicas view who leads
	// (the command sets it under leader election).
	Replicas func() dashboard.Replicas
	// RedactKinds are kinds the dashboard shows only by name, namespace
	// and labels; Secrets always are.
	RedactKinds []schema.GroupKind
	// AllowedHosts are the host names Handler answers besides IP
	// addresses and localhost (dashboard.Protect): a proxy's name.
	AllowedHosts []string
	// AllowResync lets the dashboard's page request a resync of the
	// event loop (dashboard.Options.AllowResync); off, it is read-only.
	AllowResync bool
}

// DefaultEventLoopConfig returns the event loop configuration the operator
// uses by default: eventloop.DefaultConfig with periodic healing every
// minute, a downstream resync in which the scheduler tries again what
// failed for good (an object the API server refused for lack of room, say)
// and re-applies what drifted without an event the operator saw.
func DefaultEventLoopConfig() eventloop.Config {
	cfg := eventloop.DefaultConfig()
	cfg.EnablePeriodicHealing = true
	cfg.PeriodicHealingInterval = eventloop.Duration{Duration: time.Minute}
	return cfg
}

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

func (o *Operator) buildMux() error {
	dash, err := dashboard.New(dashboard.Options{
		Title: "WebApp operator", Scheduler: o.sched, Loop: o.loop, Metrics: o.registry,
		Replicas: o.opts.Replicas, RedactKinds: o.opts.RedactKinds, AllowedHosts: o.opts.AllowedHosts,
		AllowResync: o.opts.AllowResync,
		// A WebApp's values are grouped by the WebApp.
		OwnerOf: func(key string) string {
			if ns, name, ok := appOfKey(key); ok {
				return appKey(ns, name)
			}
			return ""
		},
	})
	if err != nil {
		return err
	}
	o.mux = http.NewServeMux()
	dash.Mount(o.mux)
	o.mux.Handle("/controller/", o.loop.HTTPHandler())
	o.mux.Handle("/scheduler/", schedulerhttp.New(o.sched))
	o.mux.Handle("/metrics", promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{}))
	o.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := o.loop.Health(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	o.mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, Endpoints)
	})
	return nil
}

// Endpoints describes what Handler serves, one "path  description" per
// line; the index (/) shows it.
const Endpoints = `/ui/                         the live dashboard: the value graph, events, controllers, replicas (read-only)
/controller/event-history    every event the loop processed, with each handler's part and the transaction
/scheduler/status            every object's state; PENDING ones say what they wait for
/scheduler/txn-history       the scheduler's transactions (format=text for the logs)
/scheduler/graph?format=dot  the dependency graph (SVG without format=dot, if Graphviz is installed)
/metrics                     Prometheus metrics of the controllers, the event loop and the scheduler
/healthz                     the event loop's health
`

// Handler serves the dashboard (/ui/), the event history (/controller/), the scheduler
// (/scheduler/), Prometheus metrics (/metrics), health (/healthz) and an
// index (/). Requests for a host name other than an IP address, localhost
// or Options.AllowedHosts are refused (DNS rebinding), and so are the
// resync requests of other sites (the Lariat APIs check Origin).
func (o *Operator) Handler() http.Handler { return dashboard.Protect(o.mux, o.opts.AllowedHosts) }

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

// dependsOnIndex indexes WebApps by the "namespace/name" of each WebApp
// they depend on.
const dependsOnIndex = "dependsOn"

// watchDependents re-runs the status of the WebApps that depend on a
// WebApp when it appears, goes, or changes its spec: their status says
// whether it exists and whether it closes a cycle, and nothing in the
// scheduler changes when it merely appears. Its status writes are left
// out: re-running every dependent for each of them cost a chain of 100
// WebApps a third more time to converge.
func (o *Operator) watchDependents(ctx context.Context) error {
	err := o.webapps.Cache().AddIndexer(dependsOnIndex, func(app *demov1.WebApp) ([]string, error) {
		keys := make([]string, len(app.Spec.DependsOn))
		for i, dep := range app.Spec.DependsOn {
			keys[i] = appKey(app.Namespace, dep)
		}
		return keys, nil
	})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	generations := map[string]int64{} // "namespace/name" -> generation last seen
	o.webapps.OnChange(ctx, "dependents", func(key string, app *demov1.WebApp) (*demov1.WebApp, error) {
		mu.Lock()
		last, known := generations[key]
		if app == nil {
			delete(generations, key)
		} else {
			generations[key] = app.Generation
		}
		mu.Unlock()
		if app != nil && known && last == app.Generation {
			return nil, nil
		}
		dependents, err := o.webapps.Cache().GetByIndex(dependsOnIndex, key)
		for _, d := range dependents {
			o.webapps.Enqueue(d.Namespace, d.Name)
		}
		return nil, err
	})
	return nil
}

// enqueueOnStatusChange re-runs the status handler of a WebApp whenever
// the scheduler changes the state of one of its values, and tells the port
// allocator of a node port the API server refused (PortRefused).
func (o *Operator) enqueueOnStatusChange(ctx context.Context) {
	w := o.sched.WatchValueStatus(ctx, ownsKey)
	defer w.Close()
	for st := range w.C() {
		if r, ok := refusedNodePort(st); ok {
			if err := o.loop.PushEventContext(ctx, r); err != nil && ctx.Err() == nil {
				o.log.WithError(err).WithField("webapp", r.App).Warn("webapp operator: could not tell the port allocator of a refused node port")
			}
		}
		if ns, name, ok := appOfKey(st.Key); ok {
			o.webapps.Enqueue(ns, name)
		}
	}
}
