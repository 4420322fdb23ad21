package dependents

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestHeldValueStaysHeldUntilTheTransactionThatDropsItCommits: the
// scheduler acts on its own between the loop's transactions and during
// them (a retry that makes a dependency available creates the values
// that waited on it), with the values the last committed transaction
// gave it. A held value dropped by a transaction under way (its owner's
// handler answers again) is still the scheduler's until that transaction
// commits: a create of it in the meantime must write nothing, and after
// a rollback it is held as before. A value set by the transaction is held
// already while the transaction's own operations run.
func TestHeldValueStaysHeldUntilTheTransactionThatDropsItCommits(t *testing.T) {
	var s heldValues
	snapshot, next := new(int), new(int)
	s.set("k", snapshot)
	var writes int
	d := &kvscheduler.Descriptor{
		Create: func(context.Context, string, any) (any, error) { writes++; return nil, nil },
		Update: func(_ context.Context, _ string, _, _ any, md any) (any, error) { writes++; return md, nil },
	}
	s.wrap(d)
	create := func(v any) int {
		before := writes
		if _, err := d.Create(t.Context(), "k", v); err != nil {
			t.Fatal(err)
		}
		return writes - before
	}

	s.begin()
	s.drop("k")
	if n := create(snapshot); n != 0 {
		t.Errorf("a create of the held snapshot while the transaction dropping it was under way wrote it (%d writes)", n)
	}
	s.rollback()
	if n := create(snapshot); n != 0 {
		t.Errorf("after the rollback, a create of the held snapshot wrote it (%d writes)", n)
	}

	s.begin()
	s.set("k", next)
	if n := create(next); n != 0 {
		t.Errorf("the held value the transaction set was written by the transaction's own create (%d writes)", n)
	}
	s.drop("k")
	s.commit()
	if n := create(snapshot); n != 1 {
		t.Errorf("after the drop committed, a create of the old snapshot (now a computed value's place) wrote %d times, want 1", n)
	}
}
