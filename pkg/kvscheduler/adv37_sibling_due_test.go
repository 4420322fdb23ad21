package kvscheduler_test

import "testing"

// TestAdv37ReCreateOrderSeed20707026 pins adv5 fuzz seed 20707026
// (`-fzorder -fzcorder -fzrevertall -fzcancel -fzcancelall -fzdd -fzprops
// -fzrd -fzdheld`, issue 25), which failed only with the early deletes of
// re-created derived values (reCreatedFirst): b/1's update to w@1@2|~d/2
// deleted d/2 early, and d/1's re-create, ordered after d/2 now, stayed by
// ordering and was created before d/2 ("re-create order: create d/1
// (dv-w@1@2|~d/2) while d/2, which it depends on, is absent"; ops [create
// a/2, delete d/2, update b/1, delete d/1, create d/1, create d/2]). It
// passes at 7627b21, before them (a guard for the next fix).
func TestAdv37ReCreateOrderSeed20707026(t *testing.T) {
	adv15Seed(t, 20707026, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzCancelF, fzCancelAll, fzDerivedDeps, fzProps, fzRecreateD, fzDHeld})
}

// TestAdv37ReCreateOrderSeed20723185 pins adv5 fuzz seed 20723185
// (`-fzorder -fzcorder -fzretry -fzdd -fzprops -fzinv -fzdheld -fzrd`,
// issue 25; a guard, not reduced): it passes at 7627b21 and failed from
// f3b020c (h25t's code put back, taken back since) on, through
// waitsForReCreate (with it returning false the seed passed): "re-create order: create d/2
// (dv-w@1@2|~a/1) while a/1, which it depends on, is absent", in a
// transaction with revert that b/2's derived-key clash fails.
func TestAdv37ReCreateOrderSeed20723185(t *testing.T) {
	adv15Seed(t, 20723185, []*bool{fzOrder, fzCreateOrder, fzRetry, fzDerivedDeps, fzProps, fzInvalid, fzDHeld, fzRecreateD})
}
