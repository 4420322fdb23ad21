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

// TestAdv27DeleteOrderSeed7306952 pins adv5 fuzz seed 7306952 (-fzretry
// -fzrb -fzcancel -fzorder -fzamb -fzinv -fzdheld; h25i's "later request
// counted as a provider to come", not reduced): "d/1 deleted before b/2
// (w|a/*,~d/1), which depends on it and is deleted later in the same
// step". It passes since a provider the transaction creates further on
// comes at its request, and a key claimed twice never comes
// (TestAdv24ProviderCreatedAfterTheCascadeDoesNotSpareADependent).
func TestAdv27DeleteOrderSeed7306952(t *testing.T) {
	adv15Seed(t, 7306952, []*bool{fzRetry, fzRecreateB, fzCancelF, fzOrder, fzAmbiguous, fzInvalid, fzDHeld})
}
