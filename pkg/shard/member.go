package shard

import (
	"context"
	"fmt"
	"slices"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// Member is one replica's membership of a ring: it holds the member Lease
// that makes the replica live for the ring's sharder, and it configures the
// replica's factory so that the ring's kinds are cached and handled only
// for the objects assigned to it (see FactoryOptions).
type Member struct {
	ring     Ring
	id       string
	identity string
	elector  *leader.Elector
}

// NewMember returns a member of ring. leases is the client of the member
// Lease (usually clientset.CoordinationV1()); like a leader's, it must not
// go through Fence. opts are pkg/leader's: the identity (default
// leader.DefaultIdentity) decides the member's ID, the durations decide how
// fast the sharder sees the member go and how long before that the
// member's writes stop. NewMember makes no request.
func NewMember(leases coordinationv1client.LeasesGetter, ring Ring, opts ...leader.Option) (*Member, error) {
	if err := ring.Validate(); err != nil {
		return nil, err
	}
	// The Lease's name depends on the identity, which leader resolves:
	// ask a first Elector (New makes no request), then pin the identity
	// so that a default one is not drawn again with another suffix.
	probe, err := leader.New(leases, ring.Namespace, MemberLeaseName(ring.Name, "probe"), opts...)
	if err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: %w", ring.Name, err)
	}
	identity := probe.Identity()
	id := MemberID(identity)
	opts = append(slices.Clone(opts),
		leader.WithIdentity(identity),
		leader.WithLabels(map[string]string{RingLabel: ring.Name}))
	e, err := leader.New(leases, ring.Namespace, MemberLeaseName(ring.Name, id), opts...)
	if err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: %w", ring.Name, err)
	}
	ring.Kinds = slices.Clone(ring.Kinds)
	return &Member{ring: ring, id: id, identity: identity, elector: e}, nil
}

// ID returns the member's ID: the value of the assignment label on the
// objects assigned to it.
func (m *Member) ID() string { return m.id }

// Identity returns the identity the member Lease names as its holder.
func (m *Member) Identity() string { return m.identity }

// Ring returns the ring the member belongs to.
func (m *Member) Ring() Ring {
	r := m.ring
	r.Kinds = slices.Clone(r.Kinds)
	return r
}

// Run holds the member Lease and calls fn while it is held, like
// leader.Run: fn's context ends when the membership is lost (the Lease
// could not be renewed within the renew deadline) or ctx ends, and fn is
// called again when the Lease is held again. Start the factory built with
// FactoryOptions in fn, so that the replica handles objects only while it
// is a live member. On a clean stop (ctx ends) the Lease is released after
// fn returned, so the sharder moves the member's objects at once.
func (m *Member) Run(ctx context.Context, fn func(context.Context) error) error {
	return m.elector.Run(ctx, fn)
}

// Fence returns a copy of cfg whose writes are refused unless the member
// holds its Lease (see leader.Elector.Fence). Build the factory from it: the
// sharder reassigns a dead member's objects directly once its Lease
// expired, and the member's writes stopped before that.
func (m *Member) Fence(cfg *rest.Config) *rest.Config { return m.elector.Fence(cfg) }

// Holding reports whether the member holds its Lease now, so that its
// fenced writes go through.
func (m *Member) Holding() bool { return m.elector.Holding() }
