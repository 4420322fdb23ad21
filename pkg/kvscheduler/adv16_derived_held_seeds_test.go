package kvscheduler_test

import (
	"strings"
	"testing"
)

// Seeds of a flag set of the adv5 fuzz never run before (issue 25's round
// on reverts with derived values): -fzdheld -fzcancel -fzcancelall -fzamb
// -fznotifyall -fzprops -fzinv -fzsnap, 2 of 20,000 from 900000. Both
// failed before that round's fixes too (applyGivenBack, wantRequest).

// adv16DHeldFlags is that flag set (fzDHeld apart: fzRunWith does not
// reset it).
func adv16DHeldFlags() []*bool {
	return []*bool{fzCancelF, fzCancelAll, fzAmbiguous, fzNotifyAll, fzProps, fzInvalid, fzSnap}
}

// TestAdv16DerivedOfAFailedDeleteUnreadSeed900108 pins seed 900108 (not
// reduced; fixed: the read-back applies again a derived value it finds
// gone that a base created in the walk derives, see rederive): transaction #16 requests b/2 = <nil>, whose derived d/1,
// removed by drift, fails to be deleted ("kvtest: d/1 does not exist")
// while the read-back of b's descriptor fails ("retrieve b: injected
// read"); the same transaction then creates b/1 = v@1|, INVALID until
// then for the clash on d/1 with b/2, and reports it CONFIGURED while the
// scheduler reports d/1, which b/1 derives, NONEXISTENT ("b/1 CONFIGURED
// (v@1|) but its d/1 is NONEXISTENT").
func TestAdv16DerivedOfAFailedDeleteUnreadSeed900108(t *testing.T) {
	withFzFlags(t, fzDHeld)
	msg, log := fzRunWith(900108, adv16DHeldFlags())
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv16KeyKeptByTheTakerOfAStoppedTransactionSeed912097 pins seed
// 912097 (not reduced; fixed: a stop between values settles the keys taken
// on a request it never applied too, and the resume judges the old base's
// clash, see giveBackUnapplied): transaction #11, stopped before b/1 = bad@2|,
// applied d/1 to b/2 = w@1|d/1, which took it from b/1 on the strength of
// that request (so the key stays b/2's); drift removes and sets b/1 again
// behind the scheduler's back. Transaction #15 (revert, stopped at b/2)
// updates b/2 to w| and deletes d/1, while b/1 is reported CONFIGURED with
// w@1@2|, which derives d/1 ("b/1 CONFIGURED (w@1@2|) but its d/1 is
// NONEXISTENT").
func TestAdv16KeyKeptByTheTakerOfAStoppedTransactionSeed912097(t *testing.T) {
	withFzFlags(t, fzDHeld)
	msg, log := fzRunWith(912097, adv16DHeldFlags())
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
