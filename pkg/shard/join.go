package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// leaseDeleteTimeout bounds the deletion of a member Lease whose term is
// over: it is best effort (the sharder reads a released or expired Lease
// as dead too), and must not hold a stopping replica up.
const leaseDeleteTimeout = 5 * time.Second

// Join keeps the replica a member of ring while ctx lives, one term after
// another: for each term it builds a new Member (NewMember with leases,
// ring and opts: a new ID every time), runs it (Member.Run) and calls fn
// with it while the term lasts. fn builds the replica's factory from m
// (m.Fence(cfg), m.FactoryOptions(cfg, opts)), starts it, and returns once
// its context ended and the factory stopped. The factory of one term is
// not started again in the next, unlike a leader's (see leader.Run):
// its informers select the term's ID, which is dead once the term is over.
//
// A term whose handlers outlived its stop grace period is lost while they
// still run; the next term's gate holds back its passes over an object
// such a handler still handles (the sharder may move it to the next
// term's ID once the lost term's Lease expired) until that handler
// returned, so that one replica never runs two handlers for one object.
//
// When a term's membership is lost, Join starts the next term at once; the
// lost term's Lease, which could not be deleted then, is deleted once the
// next term holds its own (the API server answers again). Join returns nil
// when ctx ends, or the first error that is not a lost membership (fn's,
// returned while its term was live, or NewMember's).
func Join(ctx context.Context, leases coordinationv1client.LeasesGetter, ring Ring, fn func(ctx context.Context, m *Member) error, opts ...leader.Option) error {
	var stale []*Member // members of lost terms whose Lease is still there
	l := &lingering{}   // passes of every term, for the next terms' gates
	for ctx.Err() == nil {
		m, err := NewMember(leases, ring, opts...)
		if err != nil {
			return err
		}
		m.lingering = l
		err = m.Run(ctx, func(ctx context.Context) error {
			stale = deleteStale(ctx, stale)
			return fn(ctx, m)
		})
		switch {
		case errors.Is(err, ErrMembershipLost):
			m.elector.Logger().Warnf("shard: member %s of ring %s lost its membership; joining again under a new ID", m.id, ring.Name)
			if !errors.Is(err, controller.ErrStillRunning) {
				// A term whose handlers may still run keeps its Lease
				// until it expires (the sharder's GC deletes it then).
				stale = append(stale, m)
			}
		case err != nil:
			return err
		}
	}
	return nil
}

// deleteStale deletes the Leases of members, keeping those it could not
// delete for the next term to try again.
func deleteStale(ctx context.Context, members []*Member) []*Member {
	var left []*Member
	for _, m := range members {
		if err := m.deleteLease(ctx); err != nil {
			m.elector.Logger().Warnf("shard: the Lease of member %s of ring %s, whose term was lost, stays for now: %v", m.id, m.ring.Name, err)
			left = append(left, m)
		}
	}
	return left
}

// deleteLease deletes the member's Lease once its term is over, so that
// Leases of dead terms do not pile up (every term has a Lease of its own).
// The member's writes stopped before (its fence closed when the term
// ended), so the sharder may move its objects at once; it reads a Lease
// that is gone as dead. The delete is conditional on the version read, and
// leaves alone a Lease another identity holds.
func (m *Member) deleteLease(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseDeleteTimeout)
	defer cancel()
	client := m.leases.Leases(m.ring.Namespace)
	name := MemberLeaseName(m.ring.Name, m.id)
	l, err := client.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" && *h != m.identity {
		return fmt.Errorf("lease %s/%s is held by %s", m.ring.Namespace, name, *h)
	}
	return deleteLeaseAsSeen(ctx, client, l)
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
