package shard

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// Ending a dead member's term where the API server sees it. A member's
// creates carry its term (leader's stamp), and the ring's term group
// binding (InstallTermPolicy) refuses them once the member's Lease says
// the term is over: released (no holder), or ended. A member that stops
// releases its Lease itself; one that was cut off or crashed cannot, and
// its expired Lease still names it and its term, which would admit a
// create of that term held in the network. So before the sharder moves
// such a member's objects directly, it ends the Lease: it labels it
// leader.TermEndedLabel with the term's ID, by an update conditional on
// the version it read (a renewal since makes it fail, and the member is
// read again), through its fenced client. Until the update succeeded the
// member is not dead, and its objects stay.
//
// The label outlives any renewal (client-go's Lease lock adds its labels
// to those it read, keeping the others), and an ended Lease is never
// live again for the sharder (holder): a member whose renewal still
// succeeded past its expiry (it could no longer write: its fence closed
// at its renew deadline) gets none of its objects back.

// endTimeout bounds the update that ends a term.
const endTimeout = 10 * time.Second

// mustEnd reports whether l, a member Lease that may no longer write,
// still names a holder and a term not ended: its term must be ended
// before its member counts as dead.
func mustEnd(l *coordinationv1.Lease) bool {
	return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && l.Labels[leader.TermEndedLabel] == ""
}

// endTerm ends the term of member id's Lease l, and marks the member dead
// once it did. It reports whether it did; the failure is logged.
func (m *members) endTerm(ctx context.Context, id string, l *coordinationv1.Lease) bool {
	ended := l.DeepCopy()
	term := ended.Labels[leader.TermIDLabel]
	if term == "" {
		term = "none" // a Lease of a version without term IDs: nothing to name
	}
	if ended.Labels == nil {
		ended.Labels = map[string]string{}
	}
	ended.Labels[leader.TermEndedLabel] = term
	ctx, cancel := context.WithTimeout(ctx, endTimeout)
	defer cancel()
	if _, err := m.ender.Leases(m.ns).Update(ctx, ended, metav1.UpdateOptions{}); err != nil {
		m.log.Warnf("shard: ring %s: cannot end the term of member %s, whose Lease expired; its objects stay until it is ended: %v", m.ring, id, err)
		return false
	}
	m.log.Infof("shard: ring %s: ended the term %s of member %s, whose Lease expired", m.ring, term, id)
	m.mu.Lock()
	m.markDead(id, time.Now())
	m.mu.Unlock()
	return true
}

// markDead records member id as dead, as of now if it was not already.
// Called with m.mu held.
func (m *members) markDead(id string, now time.Time) {
	m.dead[id] = true
	if _, ok := m.deadAt[id]; !ok {
		m.deadAt[id] = now
	}
}
