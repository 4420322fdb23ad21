package kvscheduler_test

import (
	"strings"
	"testing"
)

// TestAdv8RetryRecordsACreateTheSouthboundNeverSaw pins adv5 fuzz seed
// 40632 of -fzretry -fzdd -fzcancel -fzcancelall -fzview: a
// retry of d/1's failed create, after the southbound took d/1 as its own
// (b/2, the southbound's, deriving it) and a full resync read it, records
// "CREATE [DERIVED RETRY] d/1, RETRYING -> OBTAINED" while the southbound
// saw no create. A record carries an operation that never ran (reduced:
// TestAdv8RetryOfACreateTheSouthboundTookRecordsNoCreate).
func TestAdv8RetryRecordsACreateTheSouthboundNeverSaw(t *testing.T) {
	msg, log := fzRunWith(40632, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzCancelAll, fzView})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv8FullResyncLeavesABaseWithoutARefusedDerivedValue pins adv5 fuzz
// seed 80586 of -fznoownedr -fzretry -fzdd -fzdheld -fzrb -fzinv (not
// reduced): a full resync after drift of b/1 (re-created, -fzrb) with
// deletes refused for existing dependents ends with b/1 CONFIGURED
// (v@1@2|) while its d/1 is NONEXISTENT; the resync's error says d/1's
// delete was refused ("not deleted: a/2, which depends on it, still
// exists"): the refused delete, waiting for a/2, was released after the
// resync re-created b/1 and deleted d/1 (reduced:
// TestAdv8FullResyncKeepsADerivedValueWhoseRefusedDeleteWaited).
func TestAdv8FullResyncLeavesABaseWithoutARefusedDerivedValue(t *testing.T) {
	dh := *fzDHeld
	*fzDHeld = true
	t.Cleanup(func() { *fzDHeld = dh })
	msg, log := fzRunWith(80586, []*bool{fzNoOwnedR, fzRetry, fzDerivedDeps, fzRecreateB, fzInvalid})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
