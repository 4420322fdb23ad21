package kvscheduler_test

import (
	"strings"
	"testing"
)

// adv15SetA and adv15SetB are the two flag sets of issue 25's wide fuzz
// runs (20,000 seeds from 300000 and from 400000).
var (
	adv15SetA = []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder}
	adv15SetB = []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder}
)

// adv15Seed runs one adv5 fuzz seed with flags and fails with its log.
func adv15Seed(t *testing.T, seed int64, flags []*bool) {
	t.Helper()
	if msg, log := fzRunWith(seed, flags); msg != "" {
		t.Fatalf("seed %d: %s\n%s", seed, msg, strings.Join(log, "\n"))
	}
}

// TestAdv15DeleteOrderSeed314404 pins adv5 fuzz seed 314404 of set A
// (fixed: r/1's own request keeps its value, so cascadeLater judges it
// as if it had none, see laterKeeps): a downstream resync, no revert and no injected failure, deletes
// b/1 (drifted back, not wanted) before r/1 = w|~b/1,r/2, which the
// resync's re-create of r/2 (drifted to v|~a/1,a/2) takes down later in
// the same step ("b/1 deleted before r/1 (w|~b/1,r/2), which depends on
// it and is deleted later in the same step"; ops delete b/1, delete r/1,
// delete r/2, create r/2).
func TestAdv15DeleteOrderSeed314404(t *testing.T) {
	adv15Seed(t, 314404, adv15SetA)
}

// TestAdv15UndoOrderSeed304888 pins adv5 fuzz seed 304888 of set A
// (fixed): a transaction with revert creates b/2, d/2, tries r/1 (already
// exists: drift put it there), creates a/2 = w|~r/1; the undo deletes
// r/1 before a/2, which is ordered after it ("r/1 deleted before a/2
// (w|~r/1), which depends on it and is deleted later in the same step";
// ops create b/2, create d/2, create r/1 (err), create a/2, delete r/1,
// delete d/2, delete b/2, delete a/2). docs/kvscheduler.md: an undo that
// takes a value away goes after the undos that take away what depends on
// it. a/2's undo back to w|a/3 takes it away (a/3 is claimed by two
// descriptors), but mayBeMet took the wanted a/3 for a provider to come,
// so dependentUndos did not put a/2's undo before r/1's.
func TestAdv15UndoOrderSeed304888(t *testing.T) {
	adv15Seed(t, 304888, adv15SetA)
}

// TestAdv15UndoOrderSeed406451 pins adv5 fuzz seed 406451 of set B
// (fixed: the undos still to apply count as requests that take values
// away, see requestTakesAway): a reverted transaction (CREATE d/1 already exists) had created
// a/3, b/2, d/1 and r/2 = v|~d/1,a/*; its undo deletes d/1 (with b/2)
// before r/2, which the later undo of a/3 takes down by the Requires
// cascade ("d/1 deleted before r/2 (v|~d/1,a/*), which depends on it and
// is deleted later in the same step"; undo ops delete d/1, delete b/2,
// delete r/2, delete a/3). The undos still to do are not among the
// deletes an undo lets go first (compare
// TestAdv12UndoAfterAReadBackCascadeSeed25473).
func TestAdv15UndoOrderSeed406451(t *testing.T) {
	adv15Seed(t, 406451, adv15SetB)
}

// TestAdv15DeleteOrderSeed407933 pins adv5 fuzz seed 407933 of set B
// (fixed: a base INVALID for a clash that stays through the step is no
// provider to come, see clashStaysFor): one transaction (no revert, no
// injected failure in it) makes r/2 INVALID, a/3 = v|~a/2,b/1 PENDING
// and re-creates b/2 as w@1|a/2 (PENDING); the delete of d/1 fails
// (drift removed it), b/2's delete is refused, and p/1's removal takes
// a/1 = w|~p/1,p/1 down before r/1 = w|~a/1,a/3, which a/3's update
// takes away later ("a/1 deleted before r/1 (w|~a/1,a/3), which
// depends on it and is deleted later in the same step"; ops delete d/1
// (err), delete a/1, delete r/1, delete a/3, delete b/2 (refused)).
// a/3's update surely takes it (and r/1) away: it Requires b/1, INVALID
// for a derived-key clash on d/1 with b/2, whose new value derives d/1
// too, so the clash stays whether d/1's delete fails or not; mayBeMet
// counted any wanted b/1 as a provider that may come.
func TestAdv15DeleteOrderSeed407933(t *testing.T) {
	adv15Seed(t, 407933, adv15SetB)
}

// TestAdv15DeleteOrderSeed410184 pins adv5 fuzz seed 410184 of set B
// (fixed): a transaction deletes a/2 and updates a/1 from v|~a/2,a/* to
// w|a/3,~p/1 (a/3 absent: PENDING); the delete of a/2 goes first, then
// a/1 ("a/2 deleted before a/1 (v|~a/2,a/*), which depends on it and is
// deleted later in the same step"; ops delete a/2, delete a/1). The
// update takes a/1 away by a dependency that is not a/2 (a/3 missing).
// a/1 Requires a/*, which its own key meets: it stays through a/2's
// delete, but cascadeSpares did not count a/1 as its own provider, so
// a/2's delete was neither postponed after a/1's update nor did the
// cascade take a/1 down first (see otherProvider).
func TestAdv15DeleteOrderSeed410184(t *testing.T) {
	adv15Seed(t, 410184, adv15SetB)
}

// TestAdv15DeleteOrderSeed603898 pins adv5 fuzz seed 603898 of
// -fzretry -fzdd -fzcancel -fzview -fzsnap -fzrec -fzorder -fzprops
// -fzinv (fixed: cascadeLater counts a provider updated further on that
// a delete under way takes down at once, a/3 = w|b/1 here): r/1 = w|a/3,~a/1 was created by the resume of a
// transaction the cancel stopped, and a/1 = v|p/1 drifted (unread) to
// the southbound's own v|. A transaction deleting b/1 (with revert;
// r/2 INVALID) takes down a/1 through p/1 and r/1 through a/3 = w|b/1,
// a/1 first ("a/1 deleted before r/1 (w|a/3,~a/1), which depends on it
// and is deleted later in the same step"; ops delete d/1, delete a/1,
// delete r/1, delete a/3, delete b/1, then the undo). Without the stop
// and the drift the same cascade keeps the order
// (TestAdv15CascadeOfOneDeleteTakesDownTheDependentFirst).
func TestAdv15DeleteOrderSeed603898(t *testing.T) {
	adv15Seed(t, 603898, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzView, fzSnap, fzRec, fzOrder, fzProps, fzInvalid})
}

// TestAdv15DeleteOrderSeed708436 pins adv5 fuzz seed 708436 of
// -fzcancel -fzcancelall -fzamb -fznotifyall -fzorder -fzrec -fzretry
// -fzdd (fixed: deleteDueDependents returned at once in a walk without
// requests, so the cascade's prediction was never asked in a
// notification): after a reverted transaction, n/2's notified removal
// leaves b/1 = w@1@2|n/* and r/2 = w|r/1,n/* without an n/ provider, and
// r/1 = w|r/2,~b/1 (a cycle with r/2) goes with r/2; the step, with no
// injected failure, deletes b/1 (its derived d/1, d/2 first) before r/1,
// ordered after it ("b/1 deleted before r/1 (w|r/2,~b/1), which depends on
// it and is deleted later in the same step"; ops delete d/1, delete d/2,
// delete b/1, delete r/1, delete r/2, create a/2).
func TestAdv15DeleteOrderSeed708436(t *testing.T) {
	adv15Seed(t, 708436, []*bool{fzCancelF, fzCancelAll, fzAmbiguous, fzNotifyAll, fzOrder, fzRec, fzRetry, fzDerivedDeps})
}
