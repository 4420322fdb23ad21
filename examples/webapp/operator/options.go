package operator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
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
