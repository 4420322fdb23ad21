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

// refRetryNotifiedSetup is the setup of TestRefNotificationsWithRetry,
// up to the notification: B/base2 and C/base3 requested, PENDING, with
// their retry options; it returns the reads of B's and C's descriptors.
func refRetryNotifiedSetup(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound, *clocktesting.FakeClock,
	*[][]string, *[][]string) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	a := refDescriptor(sb, "descriptor1", "A/")
	a.Retrieve = nil
	b := refDescriptor(sb, "descriptor2", "B/")
	b.Dependencies = refDeps(map[string][]string{"B/base2": {"A/base1"}, "B/base2/item2": {"A/base1/item2"}})
	afterFailure(b, "create", "B/base2/item2", func() { sb.Set("B/base2", "item1", false) })
	c := sb.Descriptor("descriptor3", "C/")
	c.RetrieveKeys = nil
	c.Dependencies = func(key string, _ any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Label: "A/", AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"A/"}}}}
	}
	c.RetrieveDependencies = []string{"descriptor2"}
	afterFailure(c, "create", "C/base3", func() { sb.Remove("C/base3") })
	readsB, readsC := correlated(b), correlated(c)
	register(t, s, a, b, c)
	ctx := context.Background()

	rec, err := s.StartNBTransaction().SetValue("B/base2", "item1,item2").
		WithRetry(kvscheduler.RetryOptions{Enabled: true, Period: time.Second, MaxAttempts: 3, ExpBackoff: true}).Commit(ctx)
	if err != nil || rec.SeqNum != 0 {
		t.Fatalf("transaction #%d: %v", rec.SeqNum, err)
	}
	rec, err = s.StartNBTransaction().SetValue("C/base3", "base-value3-data").
		WithRetry(kvscheduler.RetryOptions{Enabled: true, Period: 3 * time.Second, MaxAttempts: 3, ExpBackoff: true}).Commit(ctx)
	if err != nil || rec.SeqNum != 1 {
		t.Fatalf("transaction #%d: %v", rec.SeqNum, err)
	}
	wantSB(t, sb, nil)
	wantOps(t, sb)
	wantNoMetadata(t, s, "descriptor1")
	return s, sb, clk, readsB, readsC
}

// Mirrors the reference's TestNotificationsWithRetry (notification_test.go;
// TestNotificationFailureIsReadBack pins its read-back): B/base2 (default
// retries: 1 s, 3 attempts, backoff) waits for A/base1, C/base3 (retries
// every 3 s) for any A/ value. A notification of A/base1 creates them; the
// create of B/base2/item2 fails and leaves B/base2 holding [item1], that
// of C/base3 fails too. Both failed values are read back (B with its
// believed value and metadata as correlate, C with none, as C/base3 does
// not exist); B/base2 is retried after 1 s (its base updated back, the
// item created), C/base3 after 3 s.
//
// The last operation of B/base2 and B/base2/item1 after the retry, which
// updates the base and re-applies item1 as it is, is UPDATE.
func TestRefNotificationsWithRetry(t *testing.T) {
	s, sb, clk, readsB, readsC := refRetryNotifiedSetup(t)
	ctx := context.Background()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wB := s.WatchValueStatus(wctx, func(k string) bool { return strings.HasPrefix(k, "B/") })
	wC := s.WatchValueStatus(wctx, func(k string) bool { return strings.HasPrefix(k, "C/") })

	sb.FailNext("create", "B/base2/item2", errors.New("failed to add derived value"))
	sb.FailNext("create", "C/base3", errors.New("failed to add value"))
	rec := notify(t, s, sb, "A/base1", "item1,item2", 10)
	st := awaitStatus(t, wB, "B/base2/item2", kvscheduler.Retrying)
	if st.LastOp != kvscheduler.OpCreate || fmt.Sprint(st.Error) != "failed to add derived value" {
		t.Errorf("B/base2/item2 reported %+v", st)
	}
	st = awaitStatus(t, wC, "C/base3", kvscheduler.Retrying)
	if st.LastOp != kvscheduler.OpCreate || fmt.Sprint(st.Error) != "failed to add value" {
		t.Errorf("C/base3 reported %+v", st)
	}
	wantStatus(t, s, "B/base2", kvscheduler.Configured, kvscheduler.OpCreate)
	wantStatus(t, s, "B/base2/item1", kvscheduler.Configured, kvscheduler.OpCreate)
	wantSB(t, sb, map[string]any{"A/base1": "item1,item2", "B/base2": "item1", "B/base2/item1": "item1"})
	wantOpsWithReads(t, sb, "create B/base2", "create B/base2/item1", "create C/base3", "create B/base2/item2",
		"retrieve descriptor2", "retrieve descriptor3") // the failed values are read back
	wantNotifiedReadBacks(t, readsB, readsC)
	if md := metadataOf(t, s, "descriptor1", "base1"); md != 10 {
		t.Errorf("A/base1 has metadata %v, want the notified 10", md)
	}
	mdB := metadataOf(t, s, "descriptor2", "base2")
	if m, _ := s.MetadataMap("descriptor3"); m != nil {
		if md, ok := m.Get("base3"); ok {
			t.Errorf("C/base3 was not created, but has metadata %v", md)
		}
	}
	wantRefHeader(t, rec, 2, kvscheduler.SBNotification, kvscheduler.NoResync, "", "A/base1=item1,item2")
	wantRefRecord(t, rec,
		"CREATE A/base1 =item1,item2 NONEXISTENT->OBTAINED",
		"CREATE B/base2 =item1,item2 PENDING->CONFIGURED",
		"CREATE B/base2/item1 =item1 NONEXISTENT->CONFIGURED derived",
		`CREATE C/base3 =base-value3-data PENDING->RETRYING err="failed to add value"`,
		"CREATE A/base1/item1 =item1 NONEXISTENT->OBTAINED derived",
		"CREATE A/base1/item2 =item2 NONEXISTENT->OBTAINED derived",
		`CREATE B/base2/item2 =item2 NONEXISTENT->RETRYING derived err="failed to add derived value"`)

	clk.Step(time.Second)
	eventually(t, "the retry of B/base2", func() bool { return retries(s) == 1 })
	awaitStatus(t, wB, "B/base2/item2", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"A/base1": "item1,item2", "B/base2": "item1,item2", "B/base2/item1": "item1",
		"B/base2/item2": "item2"})
	wantOps(t, sb, "update B/base2", "create B/base2/item2")
	wantStatus(t, s, "B/base2/item2", kvscheduler.Configured, kvscheduler.OpCreate)
	wantStatus(t, s, "B/base2", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "B/base2/item1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantRetryRecord(t, lastRecord(t, s), 3, 2, "B/base2=item1,item2",
		"UPDATE B/base2 =item1=>item1,item2 CONFIGURED->CONFIGURED retry",
		`CREATE B/base2/item2 =item2 RETRYING->CONFIGURED derived retry preverr="failed to add derived value"`)

	clk.Step(2 * time.Second)
	eventually(t, "the retry of C/base3", func() bool { return retries(s) == 2 })
	awaitStatus(t, wC, "C/base3", kvscheduler.Configured)
	wantOps(t, sb, "create C/base3")
	wantStatus(t, s, "C/base3", kvscheduler.Configured, kvscheduler.OpCreate)
	wantRetryRecord(t, lastRecord(t, s), 4, 2, "C/base3=base-value3-data",
		`CREATE C/base3 =base-value3-data RETRYING->CONFIGURED retry preverr="failed to add value"`)
	if md := metadataOf(t, s, "descriptor1", "base1"); md != 10 {
		t.Errorf("A/base1 has metadata %v, want the notified 10", md)
	}
	if md := metadataOf(t, s, "descriptor2", "base2"); md != mdB {
		t.Errorf("B/base2 was updated in place, but its metadata changed from %v to %v", mdB, md)
	}
	metadataOf(t, s, "descriptor3", "base3")
}

// wantNotifiedReadBacks checks the reads after the notification's
// failures: B's with its believed base and metadata, C's with nothing
// (the values whose create failed do not exist).
func wantNotifiedReadBacks(t *testing.T, readsB, readsC *[][]string) {
	t.Helper()
	if want := [][]string{{"B/base2=item1,item2+md"}}; !reflect.DeepEqual(*readsB, want) {
		t.Errorf("B read back with correlate %q, want %q", *readsB, want)
	}
	if want := [][]string{nil}; !reflect.DeepEqual(*readsC, want) {
		t.Errorf("C read back with correlate %q, want none", *readsC)
	}
}

// wantRetryRecord checks a retry's record: its number, the transaction
// whose failures it retries, its values (the requests it applies again)
// and its operations, each the first retry.
func wantRetryRecord(t *testing.T, rec *kvscheduler.TxnRecord, seq, of uint64, value string, ops ...string) {
	t.Helper()
	wantRefHeader(t, rec, seq, kvscheduler.RetryFailedOps, kvscheduler.NoResync, "", value)
	if !reflect.DeepEqual(rec.RetryOf, []uint64{of}) {
		t.Errorf("transaction #%d retries %v, want [%d]", rec.SeqNum, rec.RetryOf, of)
	}
	wantRefRecord(t, rec, ops...)
	for _, op := range rec.Executed {
		if op.Attempt != 1 || op.RetryFor != of {
			t.Errorf("%s %s: attempt %d of transaction %d, want 1 of %d", op.Operation, op.Key, op.Attempt, op.RetryFor, of)
		}
	}
}
