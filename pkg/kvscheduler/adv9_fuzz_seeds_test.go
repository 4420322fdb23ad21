package kvscheduler_test

import (
	"strings"
	"testing"
)

// TestAdv9DeleteOrderAfterFailedReadsAndARecreatedBase pins adv5 fuzz seed
// 201083 of -fzcancel -fzcancelall -fzorder -fzdd -fzrb -fznoownedr (not
// reduced): after failed reads of a/ and b/ keys, a refused undo and an
// INVALID clash on d/1, a transaction re-creates b/2 (v@1| to v|~a/1,~a/2,
// dropping its derived d/1) and updates a/3 from v|~d/1,d/* to w|d/1; the
// southbound sees "delete d/1, delete b/2, create b/2, delete a/1, delete
// a/3": d/1 is deleted before a/3, which depends on it (Requires d/1 and
// d/*, ordered after d/1), in the same step. It may share its mechanism
// with the known open TestAdv8CascadedDependentOrderedAfterADerivedValueGoesFirst
// (seeds 23274 and 70373): not checked.
func TestAdv9DeleteOrderAfterFailedReadsAndARecreatedBase(t *testing.T) {
	msg, log := fzRunWith(201083, []*bool{fzCancelF, fzCancelAll, fzOrder, fzDerivedDeps, fzRecreateB, fzNoOwnedR})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv9StoppedCascadeSeed pins adv5 fuzz seed 102532 of -fzcancel
// -fzcancelall -fzretry -fzdd -fzrb -fzview -fzdheld, reduced as
// TestAdv9StoppedCascadeLeavesADependentWithoutItsDerivedValue: a stop
// after a Requires cascade deleted b/2's derived d/2, before b/2, leaves
// b/2 CONFIGURED with d/2 NONEXISTENT.
func TestAdv9StoppedCascadeSeed(t *testing.T) {
	dh := *fzDHeld
	*fzDHeld = true
	t.Cleanup(func() { *fzDHeld = dh })
	msg, log := fzRunWith(102532, []*bool{fzCancelF, fzCancelAll, fzRetry, fzDerivedDeps, fzRecreateB, fzView})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
