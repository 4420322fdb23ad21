package kvscheduler_test

import (
	"strconv"
	"testing"
)

// The adv5 fuzz seeds of h25q's attack (issue 25) that a base's own update
// re-creating derived values (-fzrd) broke, pinned once h25t's fix
// (reCreatedFirst, waitsForReCreate) made them pass. Each failed before it
// with "delete order: d/x deleted before ..., which depends on it and is
// deleted later in the same step", except 18408842, which passed already
// on dc0ce50 through this harness (h25q saw it fail on an older main);
// TestAdv32ReCreatedDerivedValueGoesBeforeTheSiblingItIsOrderedAfter is
// its reduction, which did fail.

// adv35SetI are the flags of h25q's set I.
func adv35SetI() []*bool {
	return []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzCancelF, fzCancelAll, fzDerivedDeps, fzProps, fzRecreateD}
}

// adv35SetL are the flags of h25q's set L.
func adv35SetL() []*bool {
	return []*bool{fzOrder, fzCreateOrder, fzRetry, fzDerivedDeps, fzProps, fzInvalid, fzDHeld, fzRecreateD}
}

// TestAdv35ReCreatedDerivedSeedsOfSetI pins seeds 18408842 and 18431181
// (a dropped sibling), 18439933 (two re-created siblings) and 18418311 (a
// new dependent of re-created derived values).
func TestAdv35ReCreatedDerivedSeedsOfSetI(t *testing.T) {
	advOpen(t, "issue 25: derived values a base's update re-creates are not deleted dependents-first among themselves (h25t's fix was taken back: h25u found it broke reverts)")
	for _, seed := range []int64{18408842, 18431181, 18439933, 18418311} {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) { adv15Seed(t, seed, adv35SetI()) })
	}
}

// TestAdv35ReCreatedDerivedSeedsOfSetL pins seeds 19117663 and 19134139
// (two re-created siblings) and 19137741 (a dropped sibling).
func TestAdv35ReCreatedDerivedSeedsOfSetL(t *testing.T) {
	advOpen(t, "issue 25: derived values a base's update re-creates are not deleted dependents-first among themselves (h25t's fix was taken back: h25u found it broke reverts)")
	for _, seed := range []int64{19117663, 19134139, 19137741} {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) { adv15Seed(t, seed, adv35SetL()) })
	}
}

// TestAdv35DeleteOrderSeed18426756 pins adv5 fuzz seed 18426756 of set I:
// with waitsForReCreate, a/1 = w|d/* waited for b/1's re-create of d/1 and
// d/2 and failed after it; the revert's undo of b/1 re-created d/1, whose
// delete took a/1's undo first, before d/2 = dv-w@1@2|~a/1,~p/2, which b/1's
// undo re-created later ("a/1 deleted before d/2 (dv-w@1@2|~a/1,~p/2), which
// depends on it and is deleted later in the same step"). It passed before
// waitsForReCreate and passes with reCreateDue in deleteDueDependents.
func TestAdv35DeleteOrderSeed18426756(t *testing.T) {
	adv15Seed(t, 18426756, adv35SetI())
}

// TestAdv35DerivedHeldSeed19101684 pins adv5 fuzz seed 19101684 of set L:
// reCreateDue at b267426 judged a derived value due for a re-create by its
// base's wanted value alone, so a delete took d/1 (ordered after r/2) away
// first though no apply of b/1's was pending to create it again: "derived
// held: b/1 CONFIGURED (w@1@2|~r/2) but its d/1 is NONEXISTENT". It passed
// at dc0ce50; reCreateDue now asks for a pending apply (derivedDue).
func TestAdv35DerivedHeldSeed19101684(t *testing.T) {
	adv15Seed(t, 19101684, adv35SetL())
}
