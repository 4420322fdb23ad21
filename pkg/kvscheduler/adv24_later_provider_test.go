package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv24ProviderCreatedAfterTheCascadeDoesNotSpareADependent is adv5
// fuzz seed 7115935 (-fznoownedr -fzrb -fzprops -fzamb -fzorder
// -fzdheld, "d/2 deleted before r/2 (w|a/*,~d/2), which depends on it
// and is deleted later in the same step"; fails on the code before
// h25f's three fixes too) reduced. b/1 = v@2| derives d/2; a/1 = v|b/1
// Requires b/1; r/2 = w|a/*,~d/2 Requires any a/ key (a/1 alone provides
// one) and is ordered after d/2. One transaction deletes b/1 and creates
// a/3 = w|. The delete goes first: d/2 with its base, and the Requires
// cascade takes a/1 down and r/2 with it (a/3 is not there yet). r/2 is
// ordered after d/2, so it must go first (docs/safety.md, the delete
// order: "no other provider may come in the transaction" is the
// condition for taking it down early). The prediction counts a/3's
// create, further on, as a provider that may come, although the walk
// creates it only after the cascade it should have stopped; so r/2 is
// left in place and goes after d/2. Without a/3 in the transaction the
// order is right ([delete r/2 delete d/2 delete a/1 delete b/1]).
func TestAdv24ProviderCreatedAfterTheCascadeDoesNotSpareADependent(t *testing.T) {
	for _, c := range []struct {
		name string
		b1   any // b/1's request: nil deletes, else a re-create (-fzrb)
	}{{"delete", nil}, {"recreate", "w@2|"}} {
		t.Run(c.name, func(t *testing.T) {
			withFzFlags(t, fzRecreateB)
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, fzDescs(sb, &fzCancel{})...)
			mustSet(t, s, "b/1", "v@2|", "a/1", "v|b/1", "r/2", "w|a/*,~d/2")
			wantState(t, s, "r/2", kvscheduler.Configured)
			before := sb.Values()
			sb.ResetOps()
			if _, err := s.StartNBTransaction().SetValue("b/1", c.b1).SetValue("a/3", "w|").Commit(context.Background()); err != nil {
				t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
			}
			if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
				t.Errorf("%s (ops %v)", msg, sb.OpStrings())
			}
			advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
		})
	}
}

// TestAdv24DeleteOrderSeed7115935 pins adv5 fuzz seed 7115935 itself
// (reduced: TestAdv24ProviderCreatedAfterTheCascadeDoesNotSpareADependent).
func TestAdv24DeleteOrderSeed7115935(t *testing.T) {
	adv15Seed(t, 7115935, []*bool{fzNoOwnedR, fzRecreateB, fzProps, fzAmbiguous, fzOrder, fzDHeld})
}
