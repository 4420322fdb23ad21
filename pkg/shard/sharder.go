package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// Defaults of SharderOptions.
const (
	// DefaultSharderWorkers is how many objects the sharder decides on at
	// once.
	DefaultSharderWorkers = 4
	// DefaultDrainTimeout is how long a drain may wait for the member's
	// acknowledgement before the sharder reports it: twice the default
	// lease duration, time for a member busy in a long handler, or one
	// that restarts, to get to it.
	DefaultDrainTimeout = 2 * leader.DefaultLeaseDuration
	// DefaultClockSkew is how far a member's clock may run behind the
	// sharder's for the sharder to take the renewTime in its Lease for a
	// recent renewal when it first sees it.
	DefaultClockSkew = time.Second
	// DefaultLeaseRetention is how long a dead member's Lease is kept
	// after the sharder found its term over (SharderOptions.LeaseRetention).
	DefaultLeaseRetention = time.Hour
)

// SharderOptions tunes NewSharder. The zero value is usable.
type SharderOptions struct {
	// Leader tunes the election of the ring's sharder (identity, timing);
	// the sharder's writes stop at its renew deadline like a leader's.
	Leader []leader.Option
	// Logger receives the sharder's reports (default: logrus' standard
	// logger); it is also the election's unless Leader sets another.
	Logger logrus.FieldLogger
	// Registerer, when set, receives the ring's metrics (see Sharder).
	Registerer prometheus.Registerer
	// Mapper maps the ring's kinds to resources and tells whether an owner
	// kind is namespaced. The default reads discovery through cfg; give
	// pkg/client's factory's RESTMapper to share one.
	Mapper meta.RESTMapper
	// Namespace limits the sharded objects to one namespace; the default
	// is all namespaces. It must match what the members watch.
	Namespace string
	// Workers is how many objects are decided on at once
	// (DefaultSharderWorkers).
	Workers int
	// DrainTimeout is how long a drain may go unacknowledged before it is
	// reported (DefaultDrainTimeout). Drains are never forced: only the
	// member knows when no handler of its own runs for the object.
	DrainTimeout time.Duration
	// RetryPeriod is how long the sharder waits before it asks again
	// about a member whose lease it could not read
	// (leader.DefaultRetryPeriod).
	RetryPeriod time.Duration
	// ClockSkew is the clock-skew allowance (DefaultClockSkew): a member
	// Lease whose renewTime is less than its lease duration plus ClockSkew
	// old, by the sharder's clock, counts as renewed recently. A member
	// whose clock runs further behind counts as live once the sharder has
	// seen its Lease renewed. Liveness only decides where objects go; a
	// member's objects are moved off it directly only once it can no
	// longer write, which no clock comparison decides (docs/replicas.md).
	ClockSkew time.Duration
	// LeaseConfig, when set, is used instead of cfg to read the members'
	// Leases (the list, the watch and the reads that confirm a member is
	// dead). The election's own Lease always goes through cfg.
	LeaseConfig *rest.Config
	// SyncTimeout is how long a ring kind the sharder cannot list yet
	// (CRD missing, RBAC) goes unreported, and how often it is reported
	// again (DefaultSharderSyncTimeout); the other kinds are assigned
	// meanwhile.
	SyncTimeout time.Duration
	// LeaseRetention is how long the Lease of a dead member is kept, once
	// this sharder found the member's term over and no object names it,
	// before it is deleted (DefaultLeaseRetention). A create the member
	// sent in its term and that was held in the network is refused by the
	// API server only while its Lease, released or ended, exists
	// (InstallTermPolicy): once the Lease is gone, the create is judged by
	// no parameter of the ring's binding and admitted (while another
	// member Lease exists). So it must exceed the longest a request can
	// be held in the network (Linux gives up retransmitting on a TCP
	// connection after about 15 minutes by default); a longer one only
	// keeps more Leases of dead terms around.
	LeaseRetention time.Duration
	// RingPolicy, when set, makes Run install the ring guard
	// (InstallRingPolicy; its Namespace defaults to Namespace) before it
	// campaigns, and return the error if it cannot: the API server then
	// refuses any other user's write of the ring's labels and trail. The
	// elected sharder applies it again whenever its policy or binding is
	// deleted or changed (ringpolicy_keep.go), for which it needs list and
	// watch on them.
	RingPolicy *RingPolicyOptions
}

// Sharder assigns the objects of a ring's kinds to the ring's live members
// (see the package documentation and docs/replicas.md). Build it with
// NewSharder and Run it in every replica: one of them, elected on the
// Lease SharderLeaseName(ring.Name), does the work.
//
// Its metrics, when SharderOptions.Registerer is set, all carry the label
// ring: lariat_shard_objects{member} counts the objects assigned to each
// member (member "" counts the unassigned ones), lariat_shard_moves_total
// counts the moves begun (a drain set, or a direct reassignment from a dead
// member), lariat_shard_drains_pending counts the drains not acknowledged
// yet and lariat_shard_drains_overdue those older than DrainTimeout. They
// describe the elected sharder's view: a standby reports no objects.
type Sharder struct {
	ring    Ring
	o       SharderOptions
	log     logrus.FieldLogger
	elector *leader.Elector
	metrics *metrics
	mapper  meta.RESTMapper
	kube    kubernetes.Interface // cfg's, unfenced: the ring guard's install

	// The clients of every term, built once: the fenced ones are fenced
	// by the election, which outlives its terms.
	readMeta, writeMeta metadata.Interface
	leases, gcLeases    kubernetes.Interface

	mu  sync.Mutex
	cur *term // the running term's state, nil while not leading
}

// NewSharder returns the sharder of ring, talking to the API server cfg
// points at. Its writes go through the election's Fence; cfg's rate limits
// apply to them (a ring of many objects wants a QPS above client-go's
// default of 5). NewSharder makes no request.
func NewSharder(cfg *rest.Config, ring Ring, o SharderOptions) (*Sharder, error) {
	if cfg == nil {
		return nil, errors.New("shard: NewSharder needs a rest.Config")
	}
	if err := ring.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultSharderWorkers
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = leader.DefaultRetryPeriod
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = DefaultSharderSyncTimeout
	}
	if o.LeaseRetention <= 0 {
		o.LeaseRetention = DefaultLeaseRetention
	}
	switch {
	case o.ClockSkew < 0:
		return nil, fmt.Errorf("shard: clock-skew allowance %v is negative", o.ClockSkew)
	case o.ClockSkew == 0:
		o.ClockSkew = DefaultClockSkew
	}
	s := &Sharder{ring: ring, o: o, log: o.Logger.WithFields(logrus.Fields{"ring": ring.Name})}
	leaseCfg := cfg
	if o.LeaseConfig != nil {
		leaseCfg = o.LeaseConfig
	}
	electionClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	leaderOpts := append([]leader.Option{leader.WithLogger(s.log)}, o.Leader...)
	s.kube = electionClient
	s.elector, err = leader.New(electionClient.CoordinationV1(), ring.Namespace, SharderLeaseName(ring.Name), leaderOpts...)
	if err != nil {
		return nil, fmt.Errorf("shard: sharder election: %w", err)
	}
	if s.readMeta, err = metadata.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	if s.writeMeta, err = metadata.NewForConfig(s.elector.Fence(cfg)); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	if s.leases, err = kubernetes.NewForConfig(leaseCfg); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	if s.gcLeases, err = kubernetes.NewForConfig(s.elector.Fence(leaseCfg)); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	s.mapper = o.Mapper
	if s.mapper == nil {
		disco, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("shard: %w", err)
		}
		s.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	}
	s.metrics = newMetrics(s)
	if o.Registerer != nil {
		if err := s.metrics.register(o.Registerer); err != nil {
			return nil, fmt.Errorf("shard: metrics: %w", err)
		}
	}
	return s, nil
}

// Elector returns the sharder's election, to ask who leads.
func (s *Sharder) Elector() *leader.Elector { return s.elector }

// Run campaigns for the ring's sharder Lease until ctx ends and, in each
// term it wins, assigns objects until the term ends. It returns nil when
// ctx ends, or the error that ended a term early (see leader.Elector.Run).
// With SharderOptions.RingPolicy it first installs the ring guard
// (InstallRingPolicy), and returns its error without campaigning; the
// elected sharder then applies the guard again whenever its policy or
// binding is deleted or changed (which needs list and watch on them, also
// checked before campaigning).
func (s *Sharder) Run(ctx context.Context) error {
	var guard *guardInstall
	if s.o.RingPolicy != nil {
		o := *s.o.RingPolicy
		if o.Namespace == "" {
			o.Namespace = s.o.Namespace
		}
		kinds, err := s.resolve(ctx) // waits for a CRD installed with the operator
		if err != nil {
			return fmt.Errorf("shard: ring %s: map the ring's kinds for the ring guard: %w", s.ring.Name, err)
		}
		var resources []schema.GroupVersionResource
		for _, k := range kinds {
			resources = append(resources, k.gvr)
		}
		if err := installRingPolicy(ctx, s.kube, s.ring, resources, o); err != nil {
			return err
		}
		if err := s.checkGuardWatch(ctx); err != nil {
			return err
		}
		guard = &guardInstall{resources: resources, o: o}
	}
	return s.elector.Run(ctx, func(ctx context.Context) error { return s.lead(ctx, guard) })
}

// resolvedKind is a ring kind with what the RESTMapper told about it.
type resolvedKind struct {
	Kind
	gvr             schema.GroupVersionResource
	ownerNamespaced bool
}

// resolve maps the ring's kinds, retrying while discovery does not know them
// yet (a CRD installed at the same time as the operator).
func (s *Sharder) resolve(ctx context.Context) ([]resolvedKind, error) {
	var kinds []resolvedKind
	err := wait.PollUntilContextCancel(ctx, s.o.RetryPeriod, true, func(context.Context) (bool, error) {
		kinds = kinds[:0]
		for _, k := range s.ring.Kinds {
			m, err := s.mapper.RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
			if err == nil && k.Owner.Kind != "" {
				var om *meta.RESTMapping
				if om, err = s.mapper.RESTMapping(k.Owner); err == nil {
					kinds = append(kinds, resolvedKind{Kind: k, gvr: m.Resource, ownerNamespaced: om.Scope.Name() == meta.RESTScopeNameNamespace})
				}
			} else if err == nil {
				kinds = append(kinds, resolvedKind{Kind: k, gvr: m.Resource})
			}
			if err != nil {
				if r, ok := s.mapper.(meta.ResettableRESTMapper); ok {
					r.Reset()
				}
				s.log.WithError(err).Warn("shard: cannot map a sharded kind yet; retrying")
				return false, nil
			}
		}
		return true, nil
	})
	return kinds, err
}

// lead is one term of the sharder: the views, the workers and the reports,
// until ctx ends; with guard, it keeps the ring guard installed
// (ringpolicy_keep.go).
func (s *Sharder) lead(ctx context.Context, guard *guardInstall) error {
	kinds, err := s.resolve(ctx)
	if err != nil {
		return nil // ctx ended
	}
	t := newTerm(s, kinds, s.readMeta, s.writeMeta, s.leases, s.gcLeases)
	s.mu.Lock()
	s.cur = t
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
	}()
	if guard != nil {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { t.keepRingGuard(ctx, guard) })
	}
	t.run(ctx)
	return nil
}
