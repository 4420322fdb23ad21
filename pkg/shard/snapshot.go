package shard

import (
	"cmp"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
)

// SnapshotKeys bounds the object keys a RingSnapshot lists per member (its
// counts cover every object): enough to see what a member holds, not a
// copy of a ring of many thousand objects per look.
const SnapshotKeys = 100

// Member states in a RingSnapshot.
const (
	// MemberLive: the sharder assigns objects to the member (its Lease is
	// renewed, and a read of it agreed).
	MemberLive = "live"
	// MemberDead: a read of its Lease showed it expired, released or
	// gone; its objects are moved directly.
	MemberDead = "dead"
	// MemberUnconfirmed: neither yet (a Lease not confirmed live, or a
	// member that objects name and whose Lease was not read).
	MemberUnconfirmed = "unconfirmed"
)

// RingSnapshot is what a replica's sharder knows of its ring at one moment
// (Sharder.Snapshot). It is a copy: nothing in it changes afterwards, and
// taking it holds no lock of the caller's.
type RingSnapshot struct {
	// Ring is the ring's name.
	Ring string
	// Sharder is the identity of the elected sharder as this replica last
	// saw it ("" before its first look).
	Sharder string
	// Leading tells whether this replica's sharder is the elected one.
	// Only the elected sharder watches the member Leases and the objects:
	// when false, Members, Unassigned and Drains are empty.
	Leading bool
	// Synced tells whether the elected sharder's views are synced and its
	// view of the member Leases follows the API server: it changes nothing
	// otherwise, and the counts below may be partial (a store still being
	// listed).
	Synced bool
	// Members are the members the sharder knows (by their Lease, or
	// because objects name them), by ID.
	Members []MemberShare
	// Unassigned counts the objects assigned to no member yet.
	Unassigned int
	// Drains are the objects asked to leave their member whose member has
	// not acknowledged yet, oldest first.
	Drains []Drain
}

// MemberShare is one member of a RingSnapshot and what it holds.
type MemberShare struct {
	// ID is the member's ID (the assignment label's value).
	ID string
	// Identity is the holder identity in its Lease ("" when it has none).
	Identity string
	// State is MemberLive, MemberDead or MemberUnconfirmed.
	State string
	// Objects counts the objects assigned to it, draining ones included;
	// ByKind counts them per kind (named as cache.KindLabel names it,
	// "v1/ConfigMap").
	Objects int
	ByKind  map[string]int
	// Keys are the first SnapshotKeys of its objects, sorted, each as
	// "Kind namespace/name".
	Keys []string
}

// Drain is an object asked to leave its member.
type Drain struct {
	// Kind is the object's kind (cache.KindLabel: "v1/ConfigMap") and Key
	// its namespace/name.
	Kind, Key string
	// Member is the ID of the member it drains from.
	Member string
	// Since is when the elected sharder's term first saw it draining.
	Since time.Time
}

// Snapshot returns what the sharder knows of the ring now: who is the
// elected sharder and, if it is this one, the members with their shares
// and the drains in flight. It makes no request and may be called at any
// time, from any goroutine. A nil Sharder (an operator that is not
// sharded this time but passes its sharder variable either way) returns
// the zero RingSnapshot, as a nil Member's Snapshot does.
func (s *Sharder) Snapshot() RingSnapshot {
	if s == nil {
		return RingSnapshot{}
	}
	out := RingSnapshot{Ring: s.ring.Name, Sharder: s.elector.Leader()}
	s.mu.Lock()
	t := s.cur
	s.mu.Unlock()
	if t == nil {
		return out
	}
	out.Leading = true
	v := t.members.view()
	out.Synced = v != nil && v.valid && t.members.inf.HasSynced()
	for _, inf := range t.informers {
		// Counts from a store still being listed are partial.
		out.Synced = out.Synced && inf.HasSynced()
	}
	shares := map[string]*MemberShare{}
	share := func(id string) *MemberShare {
		if shares[id] == nil {
			shares[id] = &MemberShare{ID: id, State: MemberUnconfirmed, ByKind: map[string]int{}}
		}
		return shares[id]
	}
	for _, o := range t.members.inf.GetStore().List() {
		if l, ok := o.(*coordinationv1.Lease); ok && strings.HasPrefix(l.Name, t.members.prefix) {
			m := share(strings.TrimPrefix(l.Name, t.members.prefix))
			if l.Spec.HolderIdentity != nil {
				m.Identity = *l.Spec.HolderIdentity
			}
		}
	}
	label := AssignmentLabel(s.ring.Name)
	for i, inf := range t.informers {
		kind := cache.KindLabel(t.kinds[i].GVK)
		for _, o := range inf.GetStore().List() {
			obj, ok := o.(metav1.Object)
			if !ok {
				continue
			}
			id := obj.GetLabels()[label]
			if id == "" {
				out.Unassigned++
				continue
			}
			m := share(id)
			m.Objects++
			m.ByKind[kind]++
			m.Keys = append(m.Keys, t.kinds[i].GVK.Kind+" "+obj.GetNamespace()+"/"+obj.GetName())
		}
	}
	for id, m := range shares {
		switch {
		case v != nil && v.liveSet[id]:
			m.State = MemberLive
		case v != nil && v.dead[id]:
			m.State = MemberDead
		}
		slices.Sort(m.Keys)
		m.Keys = slices.Clip(m.Keys[:min(len(m.Keys), SnapshotKeys)])
		out.Members = append(out.Members, *m)
	}
	slices.SortFunc(out.Members, func(a, b MemberShare) int { return strings.Compare(a.ID, b.ID) })
	out.Drains = t.drains.list(t.kinds)
	return out
}

// list returns the drains pending, oldest first.
func (d *drains) list(kinds []resolvedKind) []Drain {
	d.mu.Lock()
	out := make([]Drain, 0, len(d.m))
	for k, x := range d.m {
		out = append(out, Drain{Kind: cache.KindLabel(kinds[k.kind].GVK), Key: k.key, Member: x.member, Since: x.since})
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b Drain) int {
		return cmp.Or(a.Since.Compare(b.Since), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key))
	})
	return out
}

// MemberSnapshot is a member's own view of its term (Member.Snapshot).
type MemberSnapshot struct {
	// Ring is the ring's name; ID and Identity are the member's (see
	// Member.ID and Member.Identity).
	Ring, ID, Identity string
	// Holding tells whether the member holds its Lease now.
	Holding bool
}

// Snapshot returns the member's ring, ID and identity and whether it holds
// its Lease now. It makes no request. A nil Member (a replica between
// terms) returns the zero MemberSnapshot.
func (m *Member) Snapshot() MemberSnapshot {
	if m == nil {
		return MemberSnapshot{}
	}
	return MemberSnapshot{Ring: m.ring.Name, ID: m.id, Identity: m.identity, Holding: m.Holding()}
}
