package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// Mirrors the reference's TestResyncWithMultipleDescriptors
// (resync_test.go): TestRefResyncWithNonEmptySB's scenario spread over the
// three descriptors of TestRefDataChangeTransactions (A/, B/ reading
// after A/, C/ after B/): each descriptor is read in that order, with the
// requested values it selects as correlate, and the resync converges.
// Deviation (docs/kvscheduler.md): C/base3/item1, created again after its
// base's re-creation, has PrevState REMOVED. The last operations are the
// reference's: CREATE for the PENDING item, UPDATE for the re-created base
// and for the item found in sync.
func TestRefResyncWithMultipleDescriptors(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	for _, b := range []string{"A/base1", "B/base2", "C/base3"} {
		sb.Set(b, "item1", false)
		sb.Set(b+"/item1", "item1", false)
	}
	ds := refThreeDescriptors(sb)
	var reads []*[][]string
	for _, d := range ds {
		reads = append(reads, correlated(d))
	}
	register(t, s, ds...)

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("B/base2", "item1,item2").
		SetValue("A/base1", "item2").SetValue("C/base3", "item1,item2").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item2", "A/base1/item2": "item2", "B/base2": "item1,item2",
		"B/base2/item1": "item1", "C/base3": "item1,item2", "C/base3/item1": "item1", "C/base3/item2": "item2"})
	wantOpsWithReads(t, sb, "retrieve descriptor1", "retrieve descriptor2", "retrieve descriptor3",
		"delete C/base3/item1", "delete C/base3", "create C/base3", "create C/base3/item1", "create C/base3/item2",
		"delete A/base1/item1", "update A/base1", "create A/base1/item2", "update B/base2")
	for i, want := range [][][]string{{{"A/base1=item2"}}, {{"B/base2=item1,item2"}}, {{"C/base3=item1,item2"}}} {
		if !reflect.DeepEqual(*reads[i], want) {
			t.Errorf("descriptor%d read with correlate %q, want %q", i+1, *reads[i], want)
		}
	}
	for i, l := range []string{"base1", "base2", "base3"} {
		metadataOf(t, s, ds[i].Name, l)
	}
	for _, view := range []kvscheduler.View{kvscheduler.NBView, kvscheduler.SBView, kvscheduler.CachedView} {
		wantBaseDump(t, s, "descriptor1", view, true, "A/base1=item2 NB")
		wantBaseDump(t, s, "descriptor2", view, true, "B/base2=item1,item2 NB")
		wantBaseDump(t, s, "descriptor3", view, true, "C/base3=item1,item2 NB")
	}
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "B/base2", kvscheduler.Configured, kvscheduler.OpUpdate)
	for _, k := range []string{"A/base1/item2", "C/base3/item1", "C/base3/item2"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}
	wantStatus(t, s, "B/base2/item1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "B/base2/item2", kvscheduler.Pending, kvscheduler.OpCreate, "A/base1/item1")
	wantStatus(t, s, "C/base3", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "",
		"A/base1=item2", "B/base2=item1,item2", "C/base3=item1,item2")
	wantRefRecord(t, rec,
		"DELETE C/base3/item1 =item1 DISCOVERED->REMOVED derived recreate",
		"DELETE C/base3 =item1 DISCOVERED->REMOVED recreate",
		"CREATE C/base3 =item1,item2 REMOVED->CONFIGURED recreate",
		"CREATE C/base3/item1 =item1 REMOVED->CONFIGURED derived recreate", // reference: NONEXISTENT (deviation)
		"CREATE C/base3/item2 =item2 NONEXISTENT->CONFIGURED derived",
		"DELETE A/base1/item1 =item1 DISCOVERED->REMOVED derived",
		"UPDATE A/base1 =item1=>item2 DISCOVERED->CONFIGURED",
		"CREATE A/base1/item2 =item2 NONEXISTENT->CONFIGURED derived",
		"UPDATE B/base2 =item1=>item1,item2 DISCOVERED->CONFIGURED",
		"CREATE B/base2/item2 =item2 NONEXISTENT->PENDING derived noop")
}

// Mirrors the reference's TestResyncWithRetry (resync_test.go): a full
// resync with retry updates A/base1 (found holding an empty array) to
// [item1, item2]; the create of item2 fails and leaves the base holding
// [item1]; the failed value's base is read back (with the believed value
// and its metadata as correlate), item2 is RETRYING, and its retry
// updates the base again and creates item2; the retry's record lists the
// values it retries. item1 has last operation UPDATE after the retry (the
// retry re-applies it, equal), as in the reference.
func TestRefResyncWithRetry(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	sb.Set("A/base1", "", false)
	d := refDescriptor(sb, "descriptor1", "A/")
	afterFailure(d, "create", "A/base1/item2", func() { sb.Set("A/base1", "item1", false) })
	reads := correlated(d)
	register(t, s, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := s.WatchValueStatus(ctx, func(k string) bool { return strings.HasPrefix(k, "A/") })

	sb.FailNext("create", "A/base1/item2", errors.New("failed to add value"))
	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).WithDescription("testing resync with retry").
		WithRetry(kvscheduler.RetryOptions{Enabled: true, Period: 3 * time.Second, MaxAttempts: 3}).
		SetValue("A/base1", "item1,item2").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Failed) != 1 || te.Failed[0].Key != "A/base1/item2" ||
		te.Failed[0].Operation != kvscheduler.OpCreate || te.Failed[0].Err.Error() != "failed to add value" {
		t.Fatalf("error %v, want the failed create of A/base1/item2", err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1", "A/base1/item1": "item1"})
	wantOpsWithReads(t, sb, "retrieve descriptor1", "update A/base1", "create A/base1/item1", "create A/base1/item2",
		"retrieve descriptor1") // the failed value's base is read back
	if len(*reads) != 2 || !reflect.DeepEqual((*reads)[0], []string{"A/base1=item1,item2"}) {
		t.Errorf("read with correlate %q, want the requested value first", *reads)
	} else if want := []string{"A/base1=item1,item2+md"}; !reflect.DeepEqual((*reads)[1], want) {
		t.Errorf("read back with correlate %q, want %q", (*reads)[1], want)
	}
	metadataOf(t, s, "descriptor1", "base1")
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "testing resync with retry",
		"A/base1=item1,item2")
	wantRefRecord(t, rec,
		"UPDATE A/base1 ==>item1,item2 DISCOVERED->CONFIGURED",
		"CREATE A/base1/item1 =item1 NONEXISTENT->CONFIGURED derived",
		`CREATE A/base1/item2 =item2 NONEXISTENT->RETRYING derived err="failed to add value"`)
	st := awaitStatus(t, w, "A/base1/item2", kvscheduler.Retrying)
	if st.LastOp != kvscheduler.OpCreate || fmt.Sprint(st.Error) != "failed to add value" {
		t.Errorf("A/base1/item2 reported %+v, want its create failed", st)
	}
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "A/base1/item1", kvscheduler.Configured, kvscheduler.OpCreate)

	clk.Step(3 * time.Second)
	eventually(t, "the retry", func() bool { return retries(s) == 1 })
	st = awaitStatus(t, w, "A/base1/item2", kvscheduler.Configured)
	if st.LastOp != kvscheduler.OpCreate || st.Error != nil {
		t.Errorf("A/base1/item2 reported %+v, want created", st)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1,item2", "A/base1/item1": "item1", "A/base1/item2": "item2"})
	wantOps(t, sb, "update A/base1", "create A/base1/item2")
	metadataOf(t, s, "descriptor1", "base1")
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "A/base1/item1", kvscheduler.Configured, kvscheduler.OpUpdate)
	rec = lastRecord(t, s)
	wantRefHeader(t, rec, 1, kvscheduler.RetryFailedOps, kvscheduler.NoResync, "", "A/base1=item1,item2")
	if !reflect.DeepEqual(rec.RetryOf, []uint64{0}) {
		t.Errorf("the retry retries %v, want [0]", rec.RetryOf)
	}
	wantRefRecord(t, rec,
		"UPDATE A/base1 =item1=>item1,item2 CONFIGURED->CONFIGURED retry",
		`CREATE A/base1/item2 =item2 RETRYING->CONFIGURED derived retry preverr="failed to add value"`)
	for _, op := range rec.Executed {
		if op.Attempt != 1 || op.RetryFor != 0 {
			t.Errorf("%s %s: attempt %d of transaction %d, want 1 of 0", op.Operation, op.Key, op.Attempt, op.RetryFor)
		}
	}
}
