package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv19BCascadeTakesADependentOfAPropertyDownFirst is adv5 fuzz seed
// 1205964 (TestAdv18UndoDeletesAValueBeforeItsDependentSeed1205964)
// reduced, with a delete request instead of the seed's undo: a/1 = v|r/2
// and b/2 = v@1|r/2 Require r/2; b/2 derives d/1 and the property p/1;
// a/3 = w|p/1,~a/1 Requires p/1 and is ordered after a/1. Deleting r/2
// takes a/1 and b/2 down (into PENDING), b/2 with its p/1, so a/3 too: a/3
// must go before a/1. Before, the cascade took a/1 down first: a/3's
// only provider of p/1 is a derived value, whose going with its base was
// not asked (cascadeLater judged only base values).
func TestAdv19BCascadeTakesADependentOfAPropertyDownFirst(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzProps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "r/2", "w|", "a/1", "v|r/2", "b/2", "v@1|r/2", "a/3", "w|p/1,~a/1")
	wantState(t, s, "a/3", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("r/2", nil).Commit(context.Background())
	ops := sb.Ops(false)
	wantState(t, s, "a/3", kvscheduler.Pending)
	wantState(t, s, "a/1", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
}
