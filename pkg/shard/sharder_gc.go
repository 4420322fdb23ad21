package shard

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// collectLeases deletes, every retry period, the Leases of members the
// term confirmed dead once no object of the ring's kinds names them any
// more. Every membership term has an ID and a Lease of its own (see
// Member), and a member that crashed never deletes its own, so without
// this they would pile up. leases is fenced by the sharder's election.
//
// It deletes a Lease only LeaseRetention after this sharder found the
// member's term over: a create of that term still held in the network is
// refused by the API server by its Lease, released or ended, and by
// nothing once the Lease is gone (InstallTermPolicy).
//
// It never deletes a live member's Lease: the member must be dead in the
// view (a quorum read showed its Lease expired, released or gone), the
// Lease as last seen must not be live either, and the delete is
// conditional on that Lease's UID and resourceVersion, so a renewal after
// it was seen makes it fail. A dead term is never live again anyway: its
// member does not campaign after its term.
func (t *term) collectLeases(ctx context.Context, leases coordinationv1client.LeaseInterface) {
	tick := time.NewTicker(t.s.o.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v := t.members.view()
		if v == nil || !v.valid || len(v.dead) == 0 {
			continue
		}
		named := map[string]bool{}
		label := AssignmentLabel(t.s.ring.Name)
		for _, inf := range t.informers {
			for _, o := range inf.GetStore().List() {
				if m, ok := o.(metav1.Object); ok {
					named[m.GetLabels()[label]] = true
					named[holder(m.GetLabels(), m.GetAnnotations(), t.s.ring.Name)] = true
				}
			}
		}
		for id := range v.dead {
			if named[id] || ctx.Err() != nil || !t.members.retained(id, t.s.o.LeaseRetention, time.Now()) {
				continue
			}
			if err := t.members.deleteDead(ctx, leases, id); err != nil {
				t.s.log.WithError(err).Debugf("shard: the Lease of dead member %s stays for now", id)
			}
		}
	}
}

// deleteDead deletes the Lease of member id, dead and named by no object,
// and forgets the member once it is gone.
func (m *members) deleteDead(ctx context.Context, leases coordinationv1client.LeaseInterface, id string) error {
	name := MemberLeaseName(m.ring, id)
	o, ok, err := m.inf.GetStore().GetByKey(m.ns + "/" + name)
	if err != nil {
		return err
	}
	if ok {
		l := o.(*coordinationv1.Lease)
		now := time.Now()
		m.mu.Lock()
		live := m.mayWrite(l, now).After(now)
		m.mu.Unlock()
		if live {
			return nil // the view will say so; never delete it
		}
		delCtx, cancel := context.WithTimeout(ctx, confirmTimeout)
		err = deleteLeaseAsSeen(delCtx, leases, l)
		cancel()
		if err != nil {
			return err
		}
		m.log.Infof("shard: ring %s: deleted the Lease of dead member %s, which no object names any more", m.ring, id)
	}
	// Gone: an object naming it later (none should) has it read as dead
	// again by a confirming read.
	m.mu.Lock()
	delete(m.dead, id)
	delete(m.deadAt, id)
	// Forgotten too, so that they do not pile up: an object naming the
	// member later waits the ring's maximum lease duration once more.
	delete(m.named, name)
	delete(m.unseen, name)
	m.mu.Unlock()
	m.poke()
	return nil
}

// retained reports whether the Lease of dead member id was kept for
// retention since this sharder found its term over.
func (m *members) retained(id string, retention time.Duration, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.deadAt[id]
	return ok && !now.Before(at.Add(retention))
}
