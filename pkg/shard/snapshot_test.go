package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// snapshotAgrees reports whether snap shows, for each of ids, the live
// member with exactly the ConfigMaps the API server has labelled with it,
// nothing unassigned, and as drains exactly the ConfigMaps that carry the
// drain label; why says what differs.
func snapshotAgrees(t *testing.T, ring Ring, snap RingSnapshot, ids ...string) (ok bool, why string) {
	t.Helper()
	held := map[string][]string{}
	var draining []string
	for name, s := range configMapStates(t, ring) {
		held[s.member] = append(held[s.member], "ConfigMap "+ring.Namespace+"/"+name)
		if s.draining {
			draining = append(draining, ring.Namespace+"/"+name)
		}
	}
	if !snap.Leading || !snap.Synced || snap.Unassigned != 0 || len(held[""]) != 0 || len(snap.Members) != len(ids) {
		return false, fmt.Sprintf("leading %v, synced %v, %d unassigned (API server: %d), members %d, want %d",
			snap.Leading, snap.Synced, snap.Unassigned, len(held[""]), len(snap.Members), len(ids))
	}
	for _, m := range snap.Members {
		want := held[m.ID]
		slices.Sort(want)
		if !slices.Contains(ids, m.ID) || m.State != MemberLive || m.Objects != len(want) ||
			m.ByKind["v1/ConfigMap"] != len(want) || !slices.Equal(m.Keys, want) {
			return false, fmt.Sprintf("member %+v, API server: %v", m, want)
		}
	}
	var drains []string
	for _, d := range snap.Drains {
		if d.Since.IsZero() || d.Kind != "v1/ConfigMap" {
			return false, fmt.Sprintf("drain %+v", d)
		}
		drains = append(drains, d.Key)
	}
	slices.Sort(drains)
	slices.Sort(draining)
	if !slices.Equal(drains, draining) {
		return false, fmt.Sprintf("drains %v, API server: %v", drains, draining)
	}
	return true, ""
}

// TestSnapshotShowsSharesMembersAndDrains: on the real API server, the
// elected sharder's snapshot names its members (by ID, with their Lease's
// identity), the objects each holds, and the drains in flight, as the API
// server has them: with one member, all of them; when a second joins,
// the objects it wants drain from the first (which here never
// acknowledges) and show as drains; once acknowledged, each member holds
// its share and nothing drains. A standby sharder's snapshot names the
// elected one and knows nothing else.
func TestSnapshotShowsSharesMembersAndDrains(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 12)
	a := startMember(t, ring, "member-a")
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	s := newSharder(t, config(), ring, o)
	runSharder(t, s)
	standbyOpts := sharderOptions(nil)
	standbyOpts.Namespace = ring.Namespace
	standbyOpts.Leader[0] = leader.WithIdentity("standby")
	standby := newSharder(t, config(), ring, standbyOpts)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- standby.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("standby sharder Run: %v", err)
		}
	}()

	var snap RingSnapshot
	var why string
	defer func() {
		if t.Failed() {
			t.Logf("the last snapshot differed: %s", why)
		}
	}()
	agrees := func(ids ...string) func() bool {
		return func() bool {
			var ok bool
			snap = s.Snapshot()
			ok, why = snapshotAgrees(t, ring, snap, ids...)
			return ok
		}
	}
	waitSettled(t, ring, a)
	eventually(t, "the snapshot shows member-a with every ConfigMap", agrees(a.id))
	if snap.Members[0].Identity != "member-a" || snap.Members[0].Objects != 12 || snap.Sharder != "sharder" {
		t.Errorf("snapshot %+v, want member-a holding the 12 ConfigMaps, elected sharder \"sharder\"", snap)
	}

	b := startMember(t, ring, "member-b")
	eventually(t, "the snapshot shows the drains toward member-b", func() bool {
		return agrees(a.id, b.id)() && len(snap.Drains) > 0
	})
	for _, d := range snap.Drains {
		if d.Member != a.id {
			t.Errorf("drain %+v, want one from member-a (%s)", d, a.id)
		}
	}
	if n := snap.Members[slices.IndexFunc(snap.Members, func(m MemberShare) bool { return m.ID == a.id })].Objects; n != 12 {
		t.Errorf("member-a holds %d objects while they drain, want all 12", n)
	}
	for _, d := range snap.Drains {
		_, name, _ := strings.Cut(d.Key, "/")
		ack(t, ring, name)
	}
	waitSettled(t, ring, a, b)
	eventually(t, "the snapshot shows each member's share and no drain", func() bool {
		return agrees(a.id, b.id)() && len(snap.Drains) == 0
	})
	if total := snap.Members[0].Objects + snap.Members[1].Objects; total != 12 || snap.Members[0].Objects == 0 || snap.Members[1].Objects == 0 {
		t.Errorf("shares %d and %d, want both members holding some of the 12", snap.Members[0].Objects, snap.Members[1].Objects)
	}

	var st RingSnapshot
	eventually(t, "the standby to see the elected sharder", func() bool {
		st = standby.Snapshot()
		return st.Sharder == "sharder"
	})
	if st.Leading || st.Synced || st.Members != nil || st.Drains != nil || st.Unassigned != 0 || st.Ring != ring.Name {
		t.Errorf("standby snapshot %+v, want the elected sharder named and nothing else", st)
	}
}

// TestNilMemberSnapshot: a replica between terms has no member; its
// snapshot is the zero one, not a panic.
func TestNilMemberSnapshot(t *testing.T) {
	var m *Member
	if got := m.Snapshot(); got != (MemberSnapshot{}) {
		t.Errorf("nil member's snapshot %+v, want the zero one", got)
	}
}
