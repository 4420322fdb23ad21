package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Mirrors the reference's TestFailedDeleteOfDerivedValue
// (datachange_test.go): the delete of a base whose derived value fails to
// delete. Deviation (docs/kvscheduler.md, "Base whose derived value failed
// to delete"): the reference puts the base back as it was (CONFIGURED,
// last operation DELETE) and records only the derived value's delete;
// Lariat does not delete the base while its derived value exists, and the
// base's delete fails too (FAILED, "not deleted: ..., which derives from
// it, still exists"), recorded and reported.
func TestRefFailedDeleteOfDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, refDescriptor(sb, "descriptor1", "A/"))
	rec, err := s.StartNBTransaction().SetValue("A/base1", "item1").Commit(context.Background())
	if err != nil || rec.SeqNum != 0 {
		t.Fatalf("transaction #%d: %v", rec.SeqNum, err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1", "A/base1/item1": "item1"})
	sb.ResetOps()

	sb.FailNext("delete", "A/base1/item1", errors.New("failed to delete value"))
	rec, err = s.StartNBTransaction().SetValue("A/base1", nil).Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Failed) == 0 || te.Failed[0].Key != "A/base1/item1" ||
		te.Failed[0].Operation != kvscheduler.OpDelete || te.Failed[0].Err.Error() != "failed to delete value" {
		t.Fatalf("error %v, want the failed delete of A/base1/item1 first", err)
	}
	// Deviation: the base's delete is a failure of its own.
	if len(te.Failed) != 2 || te.Failed[1].Key != "A/base1" || te.Failed[1].Operation != kvscheduler.OpDelete {
		t.Errorf("failures %v, want the base's delete second", te.Failed)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1", "A/base1/item1": "item1"})
	wantOps(t, sb, "delete A/base1/item1")
	wantRefHeader(t, rec, 1, kvscheduler.NBTransaction, kvscheduler.NoResync, "", "A/base1=<nil>")
	wantRefRecord(t, rec,
		`DELETE A/base1/item1 =item1 CONFIGURED->FAILED derived err="failed to delete value"`,
		// Deviation: the reference records no operation of the base.
		`DELETE A/base1 =item1 CONFIGURED->FAILED err="kvscheduler: not deleted: A/base1/item1, which derives from it, still exists"`)
	wantStatusErr(t, s, "A/base1/item1", kvscheduler.Failed, kvscheduler.OpDelete, "failed to delete value")
	// Deviation: the reference's base is CONFIGURED (last operation DELETE).
	wantStatusErr(t, s, "A/base1", kvscheduler.Failed, kvscheduler.OpDelete,
		"kvscheduler: not deleted: A/base1/item1, which derives from it, still exists")
}

// Mirrors the reference's TestFailedRecreateOfDerivedValue
// (datachange_test.go): an update of a base changes its derived value,
// which is updated by re-creation; its delete succeeds, its create fails
// and leaves the southbound holding an empty array for the base.
func TestRefFailedRecreateOfDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := refDescriptor(sb, "descriptor1", "A/")
	d.UpdateWithRecreate = func(key string, _, _, _ any) bool { return key == "A/base1/item1" }
	afterFailure(d, "create", "A/base1/item1", func() { sb.Set("A/base1", "", false) })
	register(t, s, d)
	mustSet(t, s, "A/base1", "item1#-v1")
	wantSB(t, sb, map[string]any{"A/base1": "item1#-v1", "A/base1/item1": "item1-v1"})
	sb.ResetOps()

	sb.FailNext("create", "A/base1/item1", errors.New("failed to create value"))
	rec, err := s.StartNBTransaction().SetValue("A/base1", "item1#-v2").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Failed) != 1 || te.Failed[0].Key != "A/base1/item1" ||
		te.Failed[0].Operation != kvscheduler.OpCreate || te.Failed[0].Err.Error() != "failed to create value" {
		t.Fatalf("error %v, want the failed create of A/base1/item1", err)
	}
	wantSB(t, sb, map[string]any{"A/base1": ""})
	wantOps(t, sb, "update A/base1", "delete A/base1/item1", "create A/base1/item1")
	wantRefHeader(t, rec, 1, kvscheduler.NBTransaction, kvscheduler.NoResync, "", "A/base1=item1#-v2")
	wantRefRecord(t, rec,
		"UPDATE A/base1 =item1#-v1=>item1#-v2 CONFIGURED->CONFIGURED",
		"DELETE A/base1/item1 =item1-v1 CONFIGURED->REMOVED derived recreate",
		`CREATE A/base1/item1 =item1-v2 REMOVED->FAILED derived recreate err="failed to create value"`)
	wantStatusErr(t, s, "A/base1/item1", kvscheduler.Failed, kvscheduler.OpCreate, "failed to create value")
}
