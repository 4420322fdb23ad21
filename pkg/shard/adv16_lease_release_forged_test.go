package shard

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// adv16ReleaseByHand edits a live member's Lease by hand into the shape of
// client-go's release (holder cleared, leaseDurationSeconds 1, renewTime
// and acquireTime now): what a script that "frees" a stuck Lease, or a
// kubectl edit copying a released Lease, writes. The ID still marks the
// member's 60 s; the copy says 1 s.
func adv16ReleaseByHand(l *coordinationv1.Lease) {
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity = ptr.To("")
	l.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	l.Spec.RenewTime = &now
	l.Spec.AcquireTime = &now
}

// TestAdv16LeaseReleasedByHandMovesObjectsFromALiveMember: a live
// member's Lease edited by hand into a release's shape is read by the
// running sharder as the member's own release (released: holder cleared,
// duration 1, renewTime not before the last seen), and its objects move at
// once, while the member's term, fence and a handler still run until its
// renew deadline (50 s here). A holder cleared by hand alone waits
// (TestAdv10LeaseHolderClearedByHandMovesObjectsFromALiveMember); the
// duration edited down to 1 s with it does not, although the member's ID
// marks 60 s. Open: nothing in a Lease tells the member's release from an
// edit that copies it (see docs/safety.md, Not yet guaranteed).
func TestAdv16LeaseReleasedByHandMovesObjectsFromALiveMember(t *testing.T) {
	adv10LeaseActedOn(t, "released by hand: holder cleared, leaseDurationSeconds 1", false, func(t *testing.T, leases coordinationv1client.LeaseInterface, name string) {
		advOpen(t, "issue 24: a Lease edited by hand into a release's shape (holder cleared, leaseDurationSeconds 1) is taken for the member's own release: its objects move at once while it still runs")
		adv10Edit(adv16ReleaseByHand)(t, leases, name)
	})
}
