package shard

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// A member Lease that disappears while it names its member (deleted by
// hand, kubectl delete lease, or by a cleanup script) says nothing about
// whether the member stopped: a member cut off from the API server goes on
// writing until its renew deadline, counted from its last renewal. So a
// Lease deleted while held is judged as one that is no longer renewed:
// from the last copy the informer had, the member is live until that
// copy's liveUntil and may write until its mayWrite, and only then is it
// dead. A Lease released first (holder cleared, as a member does at the
// end of its term) is not remembered: gone,
// it is dead at once.
//
// A sharder elected after the deletion never saw the Lease and cannot
// tell when its member last renewed. It knows that the member's last
// renewal came before the deletion, which came before the sharder first
// found the Lease missing, and that the member stops writing its renew
// deadline after that renewal (pkg/leader does not create a Lease deleted
// under its holder: its renewals fail and its term ends), within its lease
// duration, which NewMember bounds by Ring.MaxMemberLeaseDuration and
// marks in the member's ID (MemberID). So it keeps the member's objects
// (undecided) until the longer of its Ring's MaxMemberLeaseDuration and
// the duration the ID marks after it first found the Lease missing, and
// only then reads the member as dead: a member whose Ring allowed a
// longer lease than the sharder's (a rolling upgrade that raises it) is
// waited for by its own. A Lease first seen not naming its member (its holder edited by
// hand before this sharder saw it) is judged so too. Objects restored
// from a backup and naming a long-dead member wait as long, once.

// leaseDeleted remembers a member Lease deleted while its member held it
// or may still write.
func (m *members) leaseDeleted(o any) {
	l := o
	if d, ok := l.(cache.DeletedFinalStateUnknown); ok {
		l = d.Obj
	}
	if lease, ok := l.(*coordinationv1.Lease); ok && strings.HasPrefix(lease.Name, m.prefix) {
		m.mu.Lock()
		// One edited by hand before (sharder_liveness.go) still counts
		// from the last copy that named its member.
		if now := time.Now(); m.holder(lease) || m.mayWrite(lease, now).After(now) {
			m.gone[lease.Name] = lease
		}
		m.mu.Unlock()
	}
	m.arrived(o)
}

// unseenUntil returns until when the member of the Lease named name may
// still write, for a Lease this sharder never saw naming its member: the
// ring's maximum lease duration, or the member's own if its ID marks a
// longer one, after this sharder first found it missing or not naming its
// member (recorded now, at the first call). Zero if it
// saw a copy naming it, which judges the member instead. Called with m.mu
// held.
func (m *members) unseenUntil(name string, now time.Time) time.Time {
	if m.named[name] {
		return time.Time{}
	}
	// The ring's maximum is this sharder's configuration; the duration
	// marked in the member's ID is what the member runs with (a member of
	// a Ring with a higher maximum, during a rolling upgrade that raises
	// it): the longer counts.
	id := strings.TrimPrefix(name, m.prefix)
	wait := max(m.maxLease, idLease(id))
	first, ok := m.unseen[name]
	if !ok {
		first = now
		m.unseen[name] = now
		m.log.Infof("shard: ring %s: member %s has no Lease naming it that this sharder saw; its objects stay until %s (%v: the longer of Ring.MaxMemberLeaseDuration %v and the lease duration its ID marks), the longest it may still write",
			m.ring, id, now.Add(wait).UTC().Format(time.RFC3339), wait, m.maxLease)
	}
	return first.Add(wait)
}

// leaseBack forgets a deleted Lease once a Lease of that name is back.
func (m *members) leaseBack(o any) {
	if a, err := meta.Accessor(o); err == nil {
		m.mu.Lock()
		delete(m.gone, a.GetName())
		m.mu.Unlock()
	}
	m.arrived(o)
}

// goneUntil returns until when the member of the deleted Lease of id may
// still be live or write (zero if its Lease was not deleted while held).
// Called with m.mu held.
func (m *members) goneUntil(id string, now time.Time) time.Time {
	l := m.gone[m.prefix+id]
	if l == nil {
		return time.Time{}
	}
	until := m.mayWrite(l, now)
	if live := m.liveUntil(l); live.After(until) {
		until = live
	}
	return until
}

// leasesToJudge returns the Leases in the informer's store and the
// deleted ones still remembered, forgetting (and returning the member IDs
// of) those whose member may no longer be live nor write: a read of their
// Lease then finds them dead. Called with m.mu held.
func (m *members) leasesToJudge(now time.Time) ([]*coordinationv1.Lease, []string) {
	var ls []*coordinationv1.Lease
	inStore := map[string]bool{}
	for _, o := range m.inf.GetStore().List() {
		l := o.(*coordinationv1.Lease)
		inStore[l.Name] = true
		ls = append(ls, l)
	}
	var over []string
	for name, l := range m.gone {
		id := strings.TrimPrefix(name, m.prefix)
		switch {
		case inStore[name]:
			delete(m.gone, name)
		case !m.goneUntil(id, now).After(now):
			delete(m.gone, name)
			over = append(over, id)
		default:
			ls = append(ls, l)
		}
	}
	return ls, over
}
