package kvscheduler_test

import (
	"strings"
	"testing"
)

// TestAdv14RevertGivesBackADerivedValueWithoutItsUpdateSeed101811 pins
// adv5 fuzz seed 101811 of -fzretry -fzdd -fzdheld -fzcancel
// -fzcancelall -fzview -fzrec (not reduced; fixed: the undo runs the
// Update that restores a key it gives back to an OBTAINED base, see
// applyGivenBack): transaction #19
// (revert) updates b/2 to w@1|~d/2,d/1, which takes d/1 over from b/1
// (update d/1 to dv-w@1|~d/2,d/1, seen by the southbound), then fails (the
// delete of d/2 injected, b/1's delete refused) and reverts. The revert
// gives d/1 back to b/1, OBTAINED at that point (origin the southbound's):
// d/1 is then implicit (node.implicit), so the record lists "UPDATE
// [REVERT DERIVED] d/1 dv-w@1|~d/2,d/1 -> dv-v@1@2|" and the scheduler's
// view holds dv-v@1@2|, but no Update ran: the southbound keeps
// dv-w@1|~d/2,d/1 (records: "southbound saw [update b/2, update d/1,
// delete d/2, delete a/1, create a/1, update b/2, update d/2], records
// carry [... #19 update b/2, #19 update d/1, #19 update d/2]"). The
// record's "delete b/1 (err)" is a refusal the checker rightly takes as
// optional; the update of d/1 is the defect, of the record and the view.
func TestAdv14RevertGivesBackADerivedValueWithoutItsUpdateSeed101811(t *testing.T) {
	withFzFlags(t, fzDHeld)
	msg, log := fzRunWith(101811, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzCancelAll, fzView, fzRec})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv14RevertReCreatesAnUnappliedRequestAsConfiguredSeed3507 pins adv5
// fuzz seed 3507 of -fzdheld -fzcancel (not reduced; also of -fzdheld
// -fzcancel -fzcancelall; fixed: a dependency update creates a base value
// with its request, see wantRequest): transaction #9 requests b/1 =
// v@2|~a/1,a/*, whose re-create's delete is refused (d/1, derived from the
// old value v@1|a/1,a/1, failed to go); b/1 stays FAILED holding v@1. The
// next transaction (revert) fails on a/1's delete; its undo takes b/1 down
// with a/1 and creates it again with v@1|a/1,a/1, what it held before
// ("CREATE [REVERT] b/1 { v@1|a/1,a/1 } PENDING -> CONFIGURED"), while the
// northbound still requests v@2|~a/1,a/*: b/1 is reported CONFIGURED with
// a value the southbound does not hold, and without d/2, which that value
// derives ("b/1 CONFIGURED (v@2|~a/1,a/*) but its d/2 is NONEXISTENT").
func TestAdv14RevertReCreatesAnUnappliedRequestAsConfiguredSeed3507(t *testing.T) {
	withFzFlags(t, fzDHeld)
	msg, log := fzRunWith(3507, []*bool{fzCancelF})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
