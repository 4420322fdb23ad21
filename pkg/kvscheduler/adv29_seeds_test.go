package kvscheduler_test

import "testing"

// TestAdv29DeleteOrderSeed15005978 pins adv5 fuzz seed 15005978 (-fzorder
// -fzcorder -fzrevertall -fzrb -fzdd -fzdheld -fzrec, 50,000 from
// 15000000): "r/2 deleted before r/1 (v|d/*,~r/2), which depends on it and
// is deleted later in the same step" before depGap timed derived
// providers and re-creates taken again (requestLeaves, takenAgain).
func TestAdv29DeleteOrderSeed15005978(t *testing.T) {
	adv15Seed(t, 15005978, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzRecreateB, fzDerivedDeps, fzDHeld, fzRec})
}
