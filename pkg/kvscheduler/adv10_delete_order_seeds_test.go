package kvscheduler_test

import (
	"strings"
	"testing"
)

// TestAdv10DeleteOrderSeed23274 pins adv5 fuzz seed 23274 of -fznoownedr
// -fzretry -fzdd -fzorder -fzview (not reduced): r/1 = v| is re-created
// (w|) and b/2 = v@2| updated to w|n/1,d/* in one transaction; d/*'s only
// provider is d/2, which b/2's new value no longer derives, so b/2 goes
// into PENDING and the Requires cascade takes a/2 = v|b/2,~r/1 down. a/2 is
// ordered after r/1: it must go before r/1's delete. It went after it (ops
// "delete r/1, create r/1, delete d/2, delete a/2, ..."): r/1's delete
// counted d/2 as a provider b/2's update may keep.
func TestAdv10DeleteOrderSeed23274(t *testing.T) {
	msg, log := fzRunWith(23274, []*bool{fzNoOwnedR, fzRetry, fzDerivedDeps, fzOrder, fzView})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv10DeleteOrderSeed70373 pins adv5 fuzz seed 70373 of -fznoownedr
// -fzretry -fzdd -fzrb -fzorder (not reduced).
func TestAdv10DeleteOrderSeed70373(t *testing.T) {
	advOpen(t, "adv5 fuzz seed 70373 of -fzorder: r/2 deleted before a/3, which depends on it, in the same step")
	msg, log := fzRunWith(70373, []*bool{fzNoOwnedR, fzRetry, fzDerivedDeps, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
