package shard

import (
	"context"
	"errors"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// Join keeps the replica a member of ring while ctx lives, one term after
// another: for each term it builds a new Member (NewMember with leases,
// ring and opts: a new ID every time), runs it (Member.Run) and calls fn
// with it while the term lasts. fn builds the replica's factory from m
// (m.Fence(cfg), m.FactoryOptions(cfg, opts)), starts it, and returns once
// its context ended and the factory stopped. The factory of one term is
// not started again in the next, unlike a leader's (see leader.Run):
// its informers select the term's ID, which is dead once the term is over.
//
// Every key a term held and whose end its handlers were not told of is
// handed to the next term's factory (controller.CarriedDeletions), and its
// gate judges each the next term's list lacks: an object deleted while
// the term held it, whose telling the term's end dropped (queued behind
// busy workers, or failed with the term's context after the stop grace)
// or which the term never saw go (a partition that ended it), is told to
// the next term's handlers: the sharder has nothing to move, so no other
// member would ever see it go. An object that moved away before it went
// is not told (its deletion was its next member's).
//
// A term whose handlers outlived its stop grace period is lost while they
// still run; the next term's gate holds back its passes over an object
// such a handler still handles (the sharder may move it to the next
// term's ID once the lost term's Lease expired) until that handler
// returned, so that one replica never runs two handlers for one object.
//
// When a term's membership is lost, Join starts the next term at once.
// No term's Lease is deleted by Join: a create the term sent may still be
// held in the network, and only its Lease, released or ended, refuses it
// (InstallTermPolicy); the ring's sharder deletes it once its retention
// passed (SharderOptions.LeaseRetention). Join returns nil
// when ctx ends, or the first error that is not a lost membership (fn's,
// returned while its term was live, or NewMember's).
func Join(ctx context.Context, leases coordinationv1client.LeasesGetter, ring Ring, fn func(ctx context.Context, m *Member) error, opts ...leader.Option) error {
	l := &lingering{} // passes of every term, for the next terms' gates
	// Deletions of held objects a term's handlers were not told of, for
	// the next term's factory (see controller.CarriedDeletions).
	carried := &controller.CarriedDeletions{}
	for ctx.Err() == nil {
		m, err := NewMember(leases, ring, opts...)
		if err != nil {
			return err
		}
		m.lingering, m.carried = l, carried
		err = m.Run(ctx, func(ctx context.Context) error { return fn(ctx, m) })
		switch {
		case errors.Is(err, ErrMembershipLost):
			m.elector.Logger().Warnf("shard: member %s of ring %s lost its membership; joining again under a new ID", m.id, ring.Name)
		case err != nil:
			return err
		}
	}
	return nil
}

// deleteLeaseAsSeen deletes the Lease l on the condition that it is still
// the version read (its UID and resourceVersion), so that a renewal since
// makes the delete fail instead of removing a Lease in use. A Lease gone
// already is no error.
func deleteLeaseAsSeen(ctx context.Context, leases coordinationv1client.LeaseInterface, l *coordinationv1.Lease) error {
	err := leases.Delete(ctx, l.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion},
		PropagationPolicy: new(metav1.DeletePropagationBackground),
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
