package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Mirrors the reference's TestDependencyCycles (datachange_test.go): a
// descriptor without Retrieve or metadata whose values A/base1 -> A/base2
// -> A/base3 -> {A/base1, A/base4} form a cycle; the cycle waits for
// A/base4, is created as a whole once it comes, is broken by the delete of
// A/base2 (which fails, and leaves the southbound holding it), and is
// created again when A/base2 is requested with a new value.
//
// A value left PENDING by its create has last operation CREATE. The
// fourth transaction differs on purpose: the reference creates A/base2
// over the value its failed delete left (its mock southbound only notes
// the invalid create), Lariat, which knows the value is still there,
// updates it.
func TestRefDependencyCycles(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("descriptor1", "A/")
	d.Retrieve, d.RetrieveKeys, d.WithMetadata = nil, nil, false
	d.Dependencies = refDeps(map[string][]string{"A/base1": {"A/base2"}, "A/base2": {"A/base3"},
		"A/base3": {"A/base1", "A/base4"}})
	register(t, s, d)
	ctx := context.Background()

	rec, err := s.StartNBTransaction().WithDescription("testing dependency cycles").
		SetValue("A/base1", "base-value1-data").SetValue("A/base2", "base-value2-data").
		SetValue("A/base3", "base-value3-data").Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, nil)
	wantOps(t, sb)
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.NoResync, "testing dependency cycles",
		"A/base1=base-value1-data", "A/base2=base-value2-data", "A/base3=base-value3-data")
	wantRefRecord(t, rec,
		"CREATE A/base1 =base-value1-data NONEXISTENT->PENDING noop",
		"CREATE A/base2 =base-value2-data NONEXISTENT->PENDING noop",
		"CREATE A/base3 =base-value3-data NONEXISTENT->PENDING noop")
	// The reference lists A/base3's unmet dependencies as [A/base4,
	// A/base1] in any order (equalStringArrays); Lariat in declaration order.
	wantPendingAfterCreate(t, s, "A/base1", "A/base2")
	wantPendingAfterCreate(t, s, "A/base2", "A/base3")
	wantPendingAfterCreate(t, s, "A/base3", "A/base1", "A/base4")

	// A/base4 makes the whole cycle ready.
	rec, err = s.StartNBTransaction().SetValue("A/base4", "base-value4-data").Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"A/base1": "base-value1-data", "A/base2": "base-value2-data",
		"A/base3": "base-value3-data", "A/base4": "base-value4-data"}
	wantSB(t, sb, all)
	wantOps(t, sb, "create A/base4", "create A/base3", "create A/base2", "create A/base1")
	wantRefHeader(t, rec, 1, kvscheduler.NBTransaction, kvscheduler.NoResync, "", "A/base4=base-value4-data")
	wantRefRecord(t, rec,
		"CREATE A/base4 =base-value4-data NONEXISTENT->CONFIGURED",
		"CREATE A/base3 =base-value3-data PENDING->CONFIGURED",
		"CREATE A/base2 =base-value2-data PENDING->CONFIGURED",
		"CREATE A/base1 =base-value1-data PENDING->CONFIGURED")
	for _, k := range []string{"A/base1", "A/base2", "A/base3", "A/base4"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}

	// The delete of A/base2 breaks the cycle, although it fails.
	sb.FailNext("delete", "A/base2", errors.New("failed to remove the value"))
	rec, err = s.StartNBTransaction().SetValue("A/base2", nil).Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Failed) != 1 || te.Failed[0].Key != "A/base2" ||
		te.Failed[0].Operation != kvscheduler.OpDelete || te.Failed[0].Err.Error() != "failed to remove the value" {
		t.Fatalf("error %v, want the failed delete of A/base2", err)
	}
	wantSB(t, sb, map[string]any{"A/base2": "base-value2-data", "A/base4": "base-value4-data"})
	wantOps(t, sb, "delete A/base3", "delete A/base1", "delete A/base2")
	wantRefHeader(t, rec, 2, kvscheduler.NBTransaction, kvscheduler.NoResync, "", "A/base2=<nil>")
	wantRefRecord(t, rec,
		"DELETE A/base3 =base-value3-data CONFIGURED->PENDING",
		"DELETE A/base1 =base-value1-data CONFIGURED->PENDING",
		`DELETE A/base2 =base-value2-data CONFIGURED->FAILED err="failed to remove the value"`)
	wantStatus(t, s, "A/base1", kvscheduler.Pending, kvscheduler.OpDelete, "A/base2")
	wantStatusErr(t, s, "A/base2", kvscheduler.Failed, kvscheduler.OpDelete, "failed to remove the value")
	wantStatus(t, s, "A/base3", kvscheduler.Pending, kvscheduler.OpDelete, "A/base1")
	wantStatus(t, s, "A/base4", kvscheduler.Configured, kvscheduler.OpCreate)

	// A new value of A/base2 brings the cycle back.
	if _, err := s.StartNBTransaction().SetValue("A/base2", "base-value2-data-new").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	all["A/base2"] = "base-value2-data-new"
	wantSB(t, sb, all)
	// The reference checks no order here; this is the dependency order.
	wantOps(t, sb, "update A/base2", "create A/base1", "create A/base3") // the reference: create A/base2, ...
	for _, k := range []string{"A/base1", "A/base3", "A/base4"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}
	wantState(t, s, "A/base2", kvscheduler.Configured) // the reference: last operation CREATE
}
