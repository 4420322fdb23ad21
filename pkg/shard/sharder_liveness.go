package shard

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// How the sharder judges its members. Two questions are asked of a member
// Lease, and they have different answers:
//
// Is the member live, so that objects may be assigned (or drained) to it?
// Only on evidence that it renewed recently: its Lease names a holder whose
// MemberID is the lease name's suffix after MemberLeaseName(ring, "") (a
// lease held by another identity says nothing about that member), and
// either renewTime + leaseDurationSeconds + ClockSkew > now (the Lease's
// own timestamp, trusted to within the clock-skew allowance), or this
// sharder saw the renewTime change less than leaseDurationSeconds ago (a
// renewal it saw arrive, which keeps a member whose clock runs behind by
// more than the allowance live). The first sight of a Lease is not a
// renewal: a newly elected sharder that finds the Lease of a member dead
// for an hour does not take it for live. Nor does one that finds a
// renewTime later than its own clock when it first saw it, by more than
// the allowance (a member whose clock ran ahead, then died): the allowance
// bounds clocks ahead as well as behind, and such a renewTime dates
// nothing, so only renewals seen arriving keep that member live. A member live by the informer's
// view is assigned objects only once a read of its Lease from the API
// server (a quorum read) agreed, since it was last not live: a late watch
// or a list served from a cache revives nobody.
//
// May the member still write, so that its objects must not be moved
// directly? Yes until its renewTime + leaseDurationSeconds, and until this
// sharder first saw its latest renewTime + leaseDurationSeconds, whichever
// is later: a member stops writing RenewDeadline after it sent its last
// successful renewal, which is before this sharder saw it, and
// RenewDeadline < LeaseDuration; no clock is compared with another's. A
// member that is not live is dead only once a read of its Lease shows
// that it may no longer write (or the Lease is released or gone); a
// failed read leaves it undecided, and its objects stay, until a later
// read succeeds. A member that is neither (an old renewTime seen for the
// first time) is read again once it may no longer write.

// seenRenewal is the latest renewTime seen of a member lease and when this
// sharder first saw it. observed tells whether that was a change this
// sharder saw arrive (a renewal), rather than its first sight of the
// Lease.
// dur is the longest leaseDurationSeconds a copy naming the member gave,
// and at least the lease duration its ID marks (MemberID): the member
// counts by the duration it runs with, so a duration edited down by hand
// shortens nothing, also in the first copy a new sharder sees.
type seenRenewal struct {
	renew    time.Time
	at       time.Time
	dur      time.Duration
	observed bool
}

// holder reports whether l is held by the member its name is for, with the
// fields a judgement needs, and its term not ended.
func (m *members) holder(l *coordinationv1.Lease) bool {
	// (An ended Lease's term is over for good: a renewal the member
	// still sent would not make it live again.)
	return m.names(l) && l.Labels[leader.TermEndedLabel] == ""
}

// names reports whether l names the member its name is for as its holder,
// with the fields a judgement needs: that member may write until l's
// renewTime + leaseDurationSeconds, ended term or not (a term-ended label
// put on by hand stops no renewal).
func (m *members) names(l *coordinationv1.Lease) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.LeaseDurationSeconds == nil || l.Spec.RenewTime == nil {
		return false
	}
	return MemberID(*l.Spec.HolderIdentity) == strings.TrimPrefix(l.Name, m.prefix)
}

// mayWrite returns until when the member of lease l may still write,
// recording when a newer renewTime was first seen. Zero: it may not.
// A Lease that no longer names its member (holder edited or cleared)
// but was seen naming it is judged like a deleted one, from the last copy that named it: an edit by hand stops nothing
// the member runs. Only the member's own release (released) ends it at
// once. Called with m.mu held.
func (m *members) mayWrite(l *coordinationv1.Lease, now time.Time) time.Time {
	s, ok := m.seen[l.Name]
	if !m.names(l) {
		switch {
		case released(l, s, strings.TrimPrefix(l.Name, m.prefix)):
			m.named[l.Name] = true
			return time.Time{}
		case !ok:
			// Never seen naming its member: edited before this sharder
			// saw it, so nothing here dates the member's last renewal.
			return m.unseenUntil(l.Name, now)
		}
		return laterOf(s.renew.Add(s.dur), s.at.Add(s.dur))
	}
	m.named[l.Name] = true
	// The duration the member runs with, marked in its ID, bounds the
	// copy's from below: a first copy edited down by hand is not the
	// member's word.
	dur := max(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second, idLease(strings.TrimPrefix(l.Name, m.prefix)))
	renew := l.Spec.RenewTime.Time
	switch {
	case !ok:
		s = seenRenewal{renew: renew, at: now, dur: dur}
	case renew.After(s.renew):
		s = seenRenewal{renew: renew, at: now, dur: max(dur, s.dur), observed: true}
	default:
		s.dur = max(dur, s.dur)
	}
	m.seen[l.Name] = s
	return laterOf(renew.Add(s.dur), s.at.Add(s.dur))
}

// released reports whether l is its member's own release, after the copy
// s was seen: client-go's release clears the holder, sets
// leaseDurationSeconds to 1 and renewTime to its clock, and the member
// stopped its work before it. Its proof (releaseProven) tells it from an
// edit by hand of the same shape.
func released(l *coordinationv1.Lease, s seenRenewal, id string) bool {
	return releaseProven(l, id) && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "") && l.Labels[leader.TermEndedLabel] == "" &&
		l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds == 1 &&
		l.Spec.RenewTime != nil && !l.Spec.RenewTime.Time.Before(s.renew)
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// liveUntil returns until when the member of lease l counts as live (zero:
// not live), from its renewTime with the clock-skew allowance, or from a
// renewal this sharder saw arrive. Call mayWrite on l first; with m.mu
// held.
func (m *members) liveUntil(l *coordinationv1.Lease) time.Time {
	if !m.holder(l) {
		return time.Time{}
	}
	dur := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	renew := l.Spec.RenewTime.Time
	s, ok := m.seen[l.Name]
	if ok {
		dur = max(dur, s.dur)
	}
	until := renew.Add(dur + m.skew)
	if ok && renew.After(s.at.Add(m.skew)) {
		// Stamped later than this sharder's clock when it first saw it,
		// beyond the allowance: a clock ahead, which dates nothing. Only
		// renewals seen arriving count.
		until = time.Time{}
	}
	if ok && s.observed && !s.renew.Before(renew) {
		if byUs := s.at.Add(dur); byUs.After(until) {
			until = byUs
		}
	}
	return until
}

// scan judges the Leases in the informer's store as of now. It returns the
// members live by them whose liveness a read confirmed already, with until
// when, and the members whose Lease must be read: live but not confirmed
// (with the resourceVersion of the Lease that says so), asked about by an
// object or live before and no longer, or due for a recheck (with "").
func (m *members) scan(now time.Time, prev *view) (map[string]time.Time, map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	live, ask, present := map[string]time.Time{}, map[string]string{}, map[string]bool{}
	// want asks for a read of id's Lease; a candidate's keeps its
	// resourceVersion.
	want := func(id string) {
		if _, ok := ask[id]; !ok {
			ask[id] = ""
		}
	}
	leases, over := m.leasesToJudge(now)
	for _, id := range over {
		want(id)
	}
	for _, l := range leases {
		if !strings.HasPrefix(l.Name, m.prefix) {
			continue
		}
		present[l.Name] = true
		id := strings.TrimPrefix(l.Name, m.prefix)
		m.mayWrite(l, now)
		switch until := m.liveUntil(l); {
		case !until.After(now):
		case m.confirmed[id]:
			live[id] = until
		case m.refuted[id] != l.ResourceVersion:
			ask[id] = l.ResourceVersion
		}
	}
	for name := range m.seen {
		if !present[name] {
			delete(m.seen, name) // a later read starts from its renewal
		}
	}
	for id := range m.refuted {
		if !present[m.prefix+id] {
			delete(m.refuted, id)
		}
	}
	// Members that were live and are no longer are confirmed at once,
	// rather than when one of their objects asks.
	if prev != nil {
		for _, id := range prev.live {
			if _, ok := live[id]; !ok {
				m.confirm[id] = true
			}
		}
	}
	for id := range m.confirm {
		if _, ok := live[id]; !ok && !m.dead[id] {
			want(id)
		}
		delete(m.confirm, id)
	}
	for id, at := range m.recheck {
		if !at.After(now) {
			want(id)
			delete(m.recheck, id)
		}
	}
	return live, ask
}

// read reads the Lease of each member in ask from the API server and
// judges it: live ones are added to live and confirmed; gone, released or
// expired ones are dead; one that is not live but may still write is read
// again when it may not. A Lease the read refutes is not read again
// until the informer's copy changes. It returns the members whose read
// failed.
func (m *members) read(ctx context.Context, ask map[string]string, live map[string]time.Time) []string {
	var retry []string
	for id, rv := range ask {
		var end *coordinationv1.Lease // the expired Lease to end before the member counts as dead
		// Bounded, so that a hung API server does not hold the view
		// back; the member stays undecided and is asked about again.
		getCtx, cancel := context.WithTimeout(ctx, confirmTimeout)
		l, err := m.leases.CoordinationV1().Leases(m.ns).Get(getCtx, MemberLeaseName(m.ring, id), metav1.GetOptions{})
		cancel()
		now := time.Now()
		m.mu.Lock()
		switch {
		case apierrors.IsNotFound(err):
			// Deleted while held: judged as no longer renewed, from the
			// last copy seen, or from the ring's maximum lease duration
			// if this sharder saw none.
			until := m.goneUntil(id, now)
			if until.IsZero() {
				until = m.unseenUntil(MemberLeaseName(m.ring, id), now)
			}
			if until.After(now) {
				m.recheck[id] = until
				if rv != "" {
					m.refuted[id] = rv
				}
			} else {
				m.markDead(id, now)
			}
		case err != nil:
			retry = append(retry, id)
		default:
			writes := m.mayWrite(l, now)
			until := m.liveUntil(l)
			switch {
			case until.After(now):
				live[id] = until
				m.confirmed[id] = true
				delete(m.recheck, id)
				delete(m.refuted, id)
			case writes.After(now):
				m.recheck[id] = writes
			case mustEnd(l):
				end = l
			default:
				m.markDead(id, now)
			}
			if !until.After(now) && rv != "" {
				m.refuted[id] = rv
			}
		}
		m.mu.Unlock()
		if err != nil && !apierrors.IsNotFound(err) {
			m.log.Warnf("shard: ring %s: cannot read the lease of member %s, its objects stay until it can be read: %v", m.ring, id, err)
		}
		if end != nil && !m.endTerm(ctx, id, end) {
			retry = append(retry, id)
		}
	}
	return retry
}

// compute publishes the view as of now and returns when it should be
// computed again (zero: on the next event only).
func (m *members) compute(ctx context.Context) time.Time {
	m.mu.Lock()
	healthy := m.healthy
	m.mu.Unlock()
	prev := m.view()
	if !healthy || !m.inf.HasSynced() {
		v := &view{}
		if !v.same(prev) {
			m.cur.Store(v)
			m.onView()
		}
		return time.Time{}
	}
	live, ask := m.scan(time.Now(), prev)
	retry := m.read(ctx, ask, live)

	var next time.Time
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	m.mu.Lock()
	for _, id := range retry {
		m.confirm[id] = true
	}
	for id := range m.confirmed {
		if _, ok := live[id]; !ok {
			delete(m.confirmed, id) // confirmed again before it is live again
		}
	}
	for id := range live {
		delete(m.dead, id)
		delete(m.deadAt, id)
	}
	for _, at := range m.recheck {
		soonest(at)
	}
	v := &view{valid: true, liveSet: map[string]bool{}, dead: maps.Clone(m.dead)}
	m.mu.Unlock()
	for id, until := range live {
		v.live = append(v.live, id)
		v.liveSet[id] = true
		soonest(until)
	}
	slices.Sort(v.live)
	if len(retry) > 0 {
		soonest(time.Now().Add(m.retry))
	}
	if !v.same(prev) {
		if prev == nil || !slices.Equal(v.live, prev.live) {
			m.log.Infof("shard: ring %s: live members %v", m.ring, v.live)
		}
		m.cur.Store(v)
		m.onView()
	}
	return next
}
