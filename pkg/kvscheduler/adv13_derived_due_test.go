package kvscheduler_test

import (
	"context"
	"testing"
)

// TestAdv13DependentDueAtAPropertyGoesBeforeEveryDerivedValue (adv5 fuzz
// seed 117719 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder,
// reduced): b/1 = w@1| derives d/1 and the property p/1; a/3 =
// v|~d/1,~p/1 is ordered after both. A transaction deletes b/1 and
// updates a/3 to v|p/1, which surely takes it away (p/1 goes with b/1).
// The derived values' deletes all start before the first ends; a/3's
// update, found due at p/1's start, was pushed below d/1's end, started
// after: d/1 went before a/3. A request due before a derived value goes
// is applied before the first of them ends.
func TestAdv13DependentDueAtAPropertyGoesBeforeEveryDerivedValue(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "w@1|", "a/3", "v|~d/1,~p/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/1", nil, "a/3", "v|p/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); len(after) != 0 {
		t.Errorf("the southbound holds %v, want nothing", after)
	}
}
