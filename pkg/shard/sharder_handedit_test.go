package shard

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// handLease is member id's Lease of ring r naming holder, renewed at
// renew for dur seconds.
func handLease(r, id, holder string, renew time.Time, dur int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: MemberLeaseName(r, id)},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &metav1.MicroTime{Time: renew}, LeaseDurationSeconds: ptr.To(dur)}}
}

// TestSharderJudgesAHandEditedLeaseFromTheMembersLastCopy: a member Lease
// edited by hand (holder changed or cleared, leaseDurationSeconds edited
// down) is judged by what the member itself wrote last: it may write until
// that copy's renewTime + its duration; only the member's own release
// (client-go's: no holder, duration 1, renewTime now) ends that at once.
func TestSharderJudgesAHandEditedLeaseFromTheMembersLastCopy(t *testing.T) {
	now := time.Now()
	const ident = "member-x"
	id := MemberID(ident)
	renew := now.Add(-10 * time.Second)
	wantUntil := renew.Add(60 * time.Second)
	cases := []struct {
		name string
		edit *coordinationv1.Lease
		want time.Time
	}{
		{"holder edited", handLease("r", id, "someone-else", renew, 60), wantUntil},
		{"holder cleared", handLease("r", id, "", renew, 60), wantUntil},
		{"duration edited down", handLease("r", id, ident, renew, 1), wantUntil},
		{"released by the member", handLease("r", id, "", now, 1), time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &members{prefix: MemberLeaseName("r", ""), seen: map[string]seenRenewal{}, named: map[string]bool{}, unseen: map[string]time.Time{}}
			// The sharder first saw the Lease before the member's last
			// renewal, so that its own sight extends nothing.
			m.mayWrite(handLease("r", id, ident, renew.Add(-time.Second), 60), renew.Add(-time.Second))
			m.mayWrite(handLease("r", id, ident, renew, 60), renew)
			if got := m.mayWrite(c.edit, now); !got.Equal(c.want) {
				t.Fatalf("after the Lease was %s, the member may write until %v, want %v", c.name, got, c.want)
			}
		})
	}
}

// TestSharderJudgesAHandEditedLeaseItNeverSawNamingItsMember: a sharder
// whose first sight of a member Lease is one edited by hand (holder
// changed or cleared) has no copy the member wrote; the member may write
// until the ring's maximum lease duration after that first sight (not
// zero: a new sharder used to end its term and move its objects at once),
// and the member's own release still ends it at once.
func TestSharderJudgesAHandEditedLeaseItNeverSawNamingItsMember(t *testing.T) {
	now := time.Now()
	id := MemberID("member-x")
	for _, c := range []struct {
		name string
		edit *coordinationv1.Lease
		want time.Time
	}{
		{"holder edited", handLease("r", id, "someone-else", now.Add(-time.Second), 60), now.Add(time.Minute)},
		{"holder cleared", handLease("r", id, "", now.Add(-time.Second), 60), now.Add(time.Minute)},
		{"released by the member", handLease("r", id, "", now, 1), time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &members{prefix: MemberLeaseName("r", ""), seen: map[string]seenRenewal{}, named: map[string]bool{}, unseen: map[string]time.Time{},
				maxLease: time.Minute, log: controlplanetest.QuietLogger()}
			if got := m.mayWrite(c.edit, now); !got.Equal(c.want) {
				t.Fatalf("first seen %s, the member may write until %v, want %v", c.name, got, c.want)
			}
			// A later look counts from the first sight, not from itself.
			if got := m.mayWrite(c.edit, now.Add(30*time.Second)); !got.Equal(c.want) {
				t.Fatalf("seen %s again 30 s later, the member may write until %v, want %v", c.name, got, c.want)
			}
		})
	}
}
