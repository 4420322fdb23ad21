package kvscheduler_test

import "testing"

// TestAdv27DeleteOrderSeed8218389 pins adv5 fuzz seed 8218389 (-fzorder
// -fznotifyall -fzamb -fzrb): "a/2 deleted before r/1 (v|~a/2,d/*),
// which depends on it and is deleted later in the same step", the shape
// of TestAdv24ReCreateIntoADependentOfTheCascadeGoesFirst (a re-create
// applied early inside a delete brought its value back, and the cascade
// then took it away after what it is ordered after).
func TestAdv27DeleteOrderSeed8218389(t *testing.T) {
	adv15Seed(t, 8218389, []*bool{fzOrder, fzNotifyAll, fzAmbiguous, fzRecreateB})
}
