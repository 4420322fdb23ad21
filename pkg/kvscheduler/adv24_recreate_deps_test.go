package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv24ReCreateIntoADependentOfTheCascadeGoesFirst is adv5 fuzz seed
// 7510734 (-fzorder -fzrb -fzdd, "a/3 deleted before r/2 (v|a/2,~a/3),
// which depends on it and is deleted later in the same step"; fails on
// the code before h25f's fixes too) reduced. b/1 = w@2| derives d/2;
// a/3 = w|d/2 and a/2 = v|b/1 Require them; r/2 = v|~a/3 is ordered
// after a/3. One transaction deletes b/1 and re-creates r/2 as
// v|a/2,~a/3: its new value also Requires a/2, which b/1's cascade takes
// down. b/1's delete is postponed after r/2's re-create (r/2 is ordered
// after a/3, which goes with b/1), but the re-create brings r/2 back with
// a value that needs a/2, so the cascade then takes a/3 down first and
// r/2 after it: ops [delete r/2 create r/2 delete a/3 delete d/2 delete
// r/2 delete a/2 delete b/1]. The delete order wants r/2 gone before
// a/3 (and a value created only after its dependencies: r/2's create
// Requires a/2, which surely goes in the same step). With r/2's value
// unchanged (v|a/2,~a/3 before and after, or not requested) the order is
// right.
func TestAdv24ReCreateIntoADependentOfTheCascadeGoesFirst(t *testing.T) {
	withFzFlags(t, fzRecreateB, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w@2|", "a/3", "w|d/2", "a/2", "v|b/1", "r/2", "v|~a/3")
	before := sb.Values()
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("b/1", nil).SetValue("r/2", "v|a/2,~a/3").Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
	}
	wantState(t, s, "r/2", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
}

// TestAdv24DeleteOrderSeed7510734 pins adv5 fuzz seed 7510734 itself
// (reduced: TestAdv24ReCreateIntoADependentOfTheCascadeGoesFirst).
func TestAdv24DeleteOrderSeed7510734(t *testing.T) {
	adv15Seed(t, 7510734, []*bool{fzOrder, fzRecreateB, fzDerivedDeps})
}
