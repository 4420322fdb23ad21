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
// passes at 7627b21, before them, and with siblingDue.
func TestAdv37ReCreateOrderSeed20707026(t *testing.T) {
	adv15Seed(t, 20707026, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzCancelF, fzCancelAll, fzDerivedDeps, fzProps, fzRecreateD, fzDHeld})
}
