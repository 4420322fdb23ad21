package kvscheduler_test

import (
	"slices"
	"strings"
	"testing"
)

// TestAdv38ValueInvalidForAClashDoesNotWaitForAReCreate is adv5 fuzz
// seed 20723185 (-fzorder -fzcorder -fzretry -fzdd -fzprops -fzinv
// -fzdheld -fzrd) reduced. b/1 = v@2| derives d/2, whose descriptor
// applies a change by re-creation. A transaction with revert requests b/2
// = w@1@2|~d/*,d/2, which derives d/1 and d/2 as b/1 does (a clash: b/2
// is INVALID), and b/1 = w@1@2|~a/1 (a/1 absent), which re-creates d/2.
// The walk reaches b/2 first. Its create would reject it at once and fail
// the transaction before b/1's update; waitsForReCreate instead made it
// wait (PENDING) for b/1's re-create of d/2 (its d/* is met only by d/2).
// So b/1's update ran and re-created d/2 = dv-w@1@2|~a/1 while a/1 is
// absent, b/2 was then rejected, and the revert re-created d/2 back:
// "re-create order: create d/2 (dv-w@1@2|~a/1) while a/1, which it
// depends on, is absent" (ops [update b/1 delete d/2 create d/2 update
// b/1 delete d/2 create d/2]). At 7627b21, before waitsForReCreate, the
// transaction failed on b/2 with no op.
func TestAdv38ValueInvalidForAClashDoesNotWaitForAReCreate(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/1", "v@2|"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	err := h.commit(true, "b/1", "w@1@2|~a/1", "b/2", "w@1@2|~d/*,d/2")
	ops := h.sb.OpStrings()
	if err == nil || !strings.Contains(err.Error(), "b/2 derives") {
		t.Fatalf("the test means b/2's derived-key clash to fail the transaction: err %v (ops %v)", err, ops)
	}
	if msg := fzCheckCreateOrder(before, h.sb.Ops(false), nil, nil); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	if slices.Contains(ops, "update b/1") {
		t.Errorf("b/1's update applied (and reverted) although b/2, before it, was INVALID: ops %v", ops)
	}
	advWantAgree(t, h.s, h.sb, "after the reverted transaction", "a/", "b/", "d/")
}
