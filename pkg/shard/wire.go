package shard

import (
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// Selector returns the label selector of the member's share,
// AssignmentLabel(ring)=ID: the informers of the sharded kinds list and
// watch only the objects assigned to this member.
func (m *Member) Selector() string { return AssignmentLabel(m.ring.Name) + "=" + m.id }

// FactoryOptions returns a copy of opts (nil means the zero options) set up
// for the ring's kinds: each caches only the member's share (ShardCache) and
// is gated (ShardControllers). Build the factory from Fence(cfg), so the
// handlers' writes are fenced like the gate's:
//
//	f, err := generic.NewFactoryFromConfig(m.Fence(cfg), scheme, m.FactoryOptions(cfg, opts))
//
// or, with a generated group factory,
//
//	f, err := demo.NewFactoryFromConfigWithOptions(m.Fence(cfg), m.FactoryOptions(cfg, opts))
//
// Kinds not in the ring are left as they are: every member caches and
// handles all of their objects.
func (m *Member) FactoryOptions(cfg *rest.Config, opts *generic.FactoryOptions) *generic.FactoryOptions {
	var out generic.FactoryOptions
	if opts != nil {
		out = *opts
	}
	m.ShardCache(&out.Cache)
	m.ShardControllers(cfg, &out.Controller)
	return &out
}

// ShardCache sets, for each of the ring's kinds, a label selector for the
// member's share, added to the kind's own selector (or the default's) when
// there is one. It does not change the maps opts held (it sets copies), so
// one set of options can be given to several members.
func (m *Member) ShardCache(opts *cache.SharedCacheFactoryOptions) {
	kinds := make(map[schema.GroupVersionKind]cache.KindOptions, len(opts.Kinds)+len(m.ring.Kinds))
	maps.Copy(kinds, opts.Kinds)
	for _, k := range m.ring.Kinds {
		ko := kinds[k.GVK]
		sel := opts.Default.LabelSelector
		if ko.LabelSelector != nil {
			sel = *ko.LabelSelector
		}
		if sel == "" {
			sel = m.Selector()
		} else {
			sel += "," + m.Selector()
		}
		ko.LabelSelector = &sel
		kinds[k.GVK] = ko
	}
	opts.Kinds = kinds
}

// ShardControllers sets the Gate (see Gate) of each of the ring's kinds,
// its requests made through Fence(cfg), and the pass tracker that makes
// the handlers' writes of the objects they handle conditional (see
// leader.Elector.Fence). Like ShardCache, it sets a copy of opts' map.
func (m *Member) ShardControllers(cfg *rest.Config, opts *controller.SharedControllerFactoryOptions) {
	gates := make(map[schema.GroupVersionKind]controller.Gate, len(opts.KindGates)+len(m.ring.Kinds))
	maps.Copy(gates, opts.KindGates)
	clients := m.newLazyClients(cfg)
	for _, k := range m.ring.Kinds {
		gates[k.GVK] = &memberGate{m: m, gvk: k.GVK, clients: clients}
	}
	opts.KindGates = gates
	if m.carried != nil {
		// Join's terms hand on what their handlers were not told of.
		held := make(map[schema.GroupVersionKind]func(map[string]string) bool, len(opts.KindHeldDeletion)+len(m.ring.Kinds))
		maps.Copy(held, opts.KindHeldDeletion)
		for _, k := range m.ring.Kinds {
			held[k.GVK] = func(labels map[string]string) bool { return m.decide(labels) != notMine }
		}
		opts.CarriedDeletions, opts.KindHeldDeletion = m.carried, held
	}
	// The handlers' writes of the objects they handle are conditional on
	// the copy they were given (see leader.Elector.Fence).
	opts.Passes = m.elector.PassTracker()
	if m.lingering != nil {
		opts.Passes = m.lingering.tracker(m, opts.Passes)
	}
}
