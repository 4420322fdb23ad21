package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Mirrors the reference's TestSpecialCase (datachange_test.go until 2019,
// the ancestor of TestFailedDeleteOfDerivedValue): the delete of a base,
// in a transaction with revert, whose derived value fails to delete and
// leaves the southbound holding the base with no items. The reference
// checks only the error: the derived value's failed delete. Deviation
// (docs/kvscheduler.md, "Base whose derived value failed to delete"): the
// base's delete fails too, and is named second; the revert then reads the
// base back and restores it (what the reference does not check is pinned
// as Lariat does it, which leaves the southbound as requested before).
func TestRefSpecialCase(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := refDescriptor(sb, "descriptor1", "A/")
	afterFailure(d, "delete", "A/base1/item1", func() { sb.Set("A/base1", "", false) })
	register(t, s, d)
	rec, err := s.StartNBTransaction().SetValue("A/base1", "item1").Commit(context.Background())
	if err != nil || rec.SeqNum != 0 {
		t.Fatalf("transaction #%d: %v", rec.SeqNum, err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1", "A/base1/item1": "item1"})

	sb.FailNext("delete", "A/base1/item1", errors.New("failed to delete value"))
	rec, err = s.StartNBTransaction().SetValue("A/base1", nil).WithRevert().Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || rec.SeqNum != 1 || len(te.Failed) == 0 || te.Failed[0].Key != "A/base1/item1" ||
		te.Failed[0].Operation != kvscheduler.OpDelete || te.Failed[0].Err.Error() != "failed to delete value" {
		t.Fatalf("transaction #%d: error %v, want the failed delete of A/base1/item1 first", rec.SeqNum, err)
	}
	if len(te.Failed) != 2 || te.Failed[1].Key != "A/base1" {
		t.Errorf("failures %v, want the base's delete second (deviation)", te.Failed)
	}
	// Whatever the revert did, what the scheduler reports is what the
	// southbound holds.
	got := sb.Values()
	for _, k := range []string{"A/base1", "A/base1/item1"} {
		st := s.GetValueStatus(k)
		v, there := got[k]
		believed, known := dump(s, kvscheduler.SBView, k)
		if there != known || there && believed.Value != v {
			t.Errorf("%s: the southbound holds %v (%v), the scheduler believes %v (%v), status %+v",
				k, v, there, believed.Value, known, st)
		}
	}
	// The revert reads the base back (the southbound emptied it) and
	// restores it; the derived value, never deleted, is confirmed.
	if !te.Reverted {
		t.Errorf("not reverted: %v", err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1", "A/base1/item1": "item1"})
	wantRefRecord(t, rec,
		`DELETE A/base1/item1 =item1 CONFIGURED->FAILED derived err="failed to delete value"`,
		`DELETE A/base1 =item1 CONFIGURED->FAILED err="kvscheduler: not deleted: A/base1/item1, which derives from it, still exists"`,
		`UPDATE A/base1 ==>item1 FAILED->CONFIGURED revert preverr="kvscheduler: not deleted: A/base1/item1, which derives from it, still exists"`,
		`UPDATE A/base1/item1 =item1=>item1 FAILED->CONFIGURED derived noop revert preverr="failed to delete value"`)
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantState(t, s, "A/base1/item1", kvscheduler.Configured)
}
