package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// Member is one term of one replica's membership of a ring: it holds the
// member Lease that makes the replica live for the ring's sharder, and it
// configures the replica's factory so that the ring's kinds are cached and
// handled only for the objects assigned to it (see FactoryOptions).
//
// A member's ID lives for one term only. Once the member stopped or lost
// its Lease, the sharder may read it as dead and move its objects to other
// members one patch at a time; a replica that came back under the same ID
// would list the objects still labelled with it and handle them while they
// are handed to others. So every Member draws an identity of its own (see
// NewMember), Run runs once, and a replica that goes on after a term ended
// builds a new Member, a new factory from it, and starts that: Join does
// this in a loop.
type Member struct {
	ring     Ring
	id       string
	identity string
	elector  *leader.Elector
	ran      atomic.Bool
	metrics  *gateMetrics
	// lingering, set by Join, holds the passes of the Join's terms still
	// under way: the gate holds back a pass over an object that a handler
	// of an earlier term still handles (see lingering.go).
	lingering *lingering
	// carried, set by Join, hands the deletions of held objects a term's
	// handlers were not told of to the next term's factory.
	carried *controller.CarriedDeletions
}

// ErrMembershipLost is returned (wrapped) by Member.Run when the member
// Lease could not be renewed within the renew deadline: the term is over
// and its ID is dead. It wraps leader.ErrLeaseLost.
var ErrMembershipLost = fmt.Errorf("shard: membership lost: %w", leader.ErrLeaseLost)

// NewMember returns a member of ring for one term. leases is the client of
// the member Lease (usually clientset.CoordinationV1()); like a leader's,
// it must not go through Fence. opts are pkg/leader's: the durations decide
// how fast the sharder sees the member go and how long before that the
// member's writes stop; the identity (leader.WithIdentity, default
// leader.DefaultIdentity) is the base of the member's: NewMember appends a
// random suffix of its own, so that the member's ID, MemberID(Identity()),
// is new even for a restarted pod of the same name. A lease duration
// above ring.MaxMemberLeaseDuration (DefaultMaxMemberLeaseDuration when
// unset) is refused: a sharder that never saw the member's Lease keeps its
// objects only that long. NewMember makes no request.
func NewMember(leases coordinationv1client.LeasesGetter, ring Ring, opts ...leader.Option) (*Member, error) {
	if err := ring.Validate(); err != nil {
		return nil, err
	}
	// The base identity is leader's to resolve: ask a first Elector (New
	// makes no request), then pin the term's identity.
	probe, err := leader.New(leases, ring.Namespace, MemberLeaseName(ring.Name, "probe"), opts...)
	if err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: %w", ring.Name, err)
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: random term suffix: %w", ring.Name, err)
	}
	// The lease duration is marked in the identity, and so in the ID the
	// member's objects are labelled with: a sharder that never saw the
	// member's Lease, or saw it edited by hand, still knows how long the
	// member may write after its last renewal.
	proof, mark, err := newReleaseProof()
	if err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: random release proof: %w", ring.Name, err)
	}
	identity := markLease(probe.Identity()+"_"+hex.EncodeToString(suffix[:])+identityReleaseMark+mark, probe.LeaseDuration())
	id := MemberID(identity)
	// Every member of the ring stamps its creates with the ring's term
	// group, whose one binding (InstallTermPolicy) judges them by the
	// member Lease in their term.
	opts = append(slices.Clone(opts),
		leader.WithIdentity(identity),
		leader.WithLabels(map[string]string{RingLabel: ring.Name}),
		leader.WithReleaseLabels(map[string]string{ReleaseProofLabel: proof}),
		leader.WithTermGroup(TermGroup(ring.Name)))
	e, err := leader.New(leases, ring.Namespace, MemberLeaseName(ring.Name, id), opts...)
	if err != nil {
		return nil, fmt.Errorf("shard: member of ring %s: %w", ring.Name, err)
	}
	if d, most := e.LeaseDuration(), ring.maxMemberLease(); d > most {
		// A sharder that never saw this member's Lease (elected after it
		// was deleted) keeps its objects only for the ring's maximum.
		return nil, fmt.Errorf("shard: member of ring %s: lease duration %v exceeds the ring's MaxMemberLeaseDuration %v: a sharder elected after the member's Lease was deleted would move its objects while it may still write; shorten the lease or raise Ring.MaxMemberLeaseDuration (on the sharder's Ring too)", ring.Name, d, most)
	}
	ring.Kinds = slices.Clone(ring.Kinds)
	return &Member{ring: ring, id: id, identity: identity, elector: e, metrics: newGateMetrics(ring.Name, id)}, nil
}

// ID returns the member's ID: the value of the assignment label on the
// objects assigned to it, and the suffix of its Lease's name. No other
// term of any replica has it.
func (m *Member) ID() string { return m.id }

// Identity returns the identity the member Lease names as its holder: the
// base identity NewMember was given (or leader.DefaultIdentity), "_" and
// the term's random suffix, "_l" and the member's lease duration in whole
// seconds (rounded up), which its ID carries too (see MemberID).
func (m *Member) Identity() string { return m.identity }

// Ring returns the ring the member belongs to.
func (m *Member) Ring() Ring {
	r := m.ring
	r.Kinds = slices.Clone(r.Kinds)
	return r
}

// Run runs the member's one term: it acquires the member Lease and calls
// fn while it is held; fn's context ends when ctx ends or the membership is
// lost (the Lease could not be renewed within the renew deadline). Run
// the factory built from this member (Fence, FactoryOptions) in fn, with
// its Run (return f.Run(ctx, workers)), so that fn returns only once every
// handler of the term has returned and the replica handles the member's
// objects only while it is live.
//
// When ctx ends, Run releases the Lease after fn returned, so the sharder
// moves the member's objects at once, and returns nil (or fn's error, if
// fn failed while the term was live). It does not delete it: a create the
// term sent may still be held in the network, and the API server refuses
// it by the released Lease (InstallTermPolicy); a Lease that is gone
// judges nothing. The ring's sharder deletes it once no object names the
// member and its retention passed (SharderOptions.LeaseRetention). If
// fn's error says handlers still ran after the stop grace period
// (controller.ErrStillRunning), the Lease is not released: it expires,
// and the sharder moves the objects only then (ending the Lease first),
// while the fence refuses the term's writes; Run returns that error. When
// the membership is lost, Run returns an error wrapping
// ErrMembershipLost and does not campaign again: the sharder may be
// moving the member's objects already, and the ID must never be live
// again. The Lease of a lost term is released once fn returned if the
// API server answers again and still names this member (its handlers have
// returned by then and its writes are refused), and left to expire
// otherwise.
// Run runs once: a second call fails. The factory cannot be started again
// either, since its selector names this member's ID; build a new Member
// and factory for the next term, or use Join.
func (m *Member) Run(ctx context.Context, fn func(context.Context) error) error {
	if !m.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("shard: member %s of ring %s ran already: a member runs one term; build a new one (see Join)", m.id, m.ring.Name)
	}
	defer m.metrics.unregister()
	var lost atomic.Bool
	var still error // fn's error, when the term's work outlived its stop grace
	err := m.elector.RunTerm(ctx, func(work context.Context) error {
		defer func() {
			if errors.Is(context.Cause(work), leader.ErrLeaseLost) {
				lost.Store(true)
			}
		}()
		err := fn(work)
		if errors.Is(err, controller.ErrStillRunning) {
			still = err
		}
		if err == nil {
			// leader waits for the term's end after an early return;
			// wait here, so that the cause is known.
			<-work.Done()
		}
		return err
	})
	if still != nil && err == nil {
		// The lease was lost meanwhile (leader logged fn's error).
		err = still
	}
	if err == nil && (lost.Load() || ctx.Err() == nil) {
		return fmt.Errorf("shard: member %s (%s) of ring %s: %w", m.id, m.identity, m.ring.Name, ErrMembershipLost)
	}
	if still != nil {
		// Handlers of the term may still act on its objects: the Lease
		// (not released by leader either) stays until it expires, and
		// the sharder moves the objects only then.
		m.elector.Logger().Warnf("shard: member %s of ring %s: handlers still running after the term; its Lease is left to expire", m.id, m.ring.Name)
		if lost.Load() || ctx.Err() == nil {
			return fmt.Errorf("shard: member %s (%s) of ring %s: %w: %w", m.id, m.identity, m.ring.Name, ErrMembershipLost, err)
		}
		return err
	}
	return err
}

// Register registers the metrics of the member's gates with r. They all carry the labels ring, member (the term's ID) and gvk (as in
// the controllers' metrics, e.g. v1/ConfigMap):
// lariat_shard_gate_admitted_total counts the passes let through to the
// handlers, lariat_shard_gate_refused_total{reason} those kept from them
// (not_mine: the cached object is assigned elsewhere, the cache lagging
// behind a move; draining: the object drains from this member;
// uncached: absent from the cache, and the API server says it was not
// deleted), and lariat_shard_gate_drains_acknowledged_total the drains
// the member acknowledged. Call it once per term, in Join's fn or before
// Run: Run unregisters them when the term ends, since its ID is dead
// then, so one registry can serve a replica's terms one after another.
func (m *Member) Register(r prometheus.Registerer) error {
	if err := m.metrics.register(r); err != nil {
		return fmt.Errorf("shard: member %s of ring %s: metrics: %w", m.id, m.ring.Name, err)
	}
	return nil
}

// Fence returns a copy of cfg whose writes are refused unless the member
// holds its Lease (see leader.Elector.Fence). Build the factory from it: the
// sharder reassigns a dead member's objects directly once its Lease
// expired, and the member's writes stopped before that.
func (m *Member) Fence(cfg *rest.Config) *rest.Config { return m.elector.Fence(cfg) }

// Holding reports whether the member holds its Lease now, so that its
// fenced writes go through.
func (m *Member) Holding() bool { return m.elector.Holding() }
