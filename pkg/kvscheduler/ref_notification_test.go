package kvscheduler_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// refNotifiedDescriptors is the setup of the reference's
// TestNotifications: A/ values without Retrieve, known from southbound
// notifications, whose items no descriptor claims (properties); B/ values
// whose descriptor claims their items, B/base2 depending on A/base1 and
// B/base2/item2 on A/base1/item2.
func refNotifiedDescriptors(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
	a := refDescriptor(sb, "descriptor1", "A/")
	a.Retrieve = nil
	a.KeySelector = func(k string) bool { return strings.HasPrefix(k, "A/") && strings.Count(k, "/") == 1 }
	b := refDescriptor(sb, "descriptor2", "B/")
	b.Dependencies = refDeps(map[string][]string{"B/base2": {"A/base1"}, "B/base2/item2": {"A/base1/item2"}})
	b.RetrieveDependencies = []string{"descriptor1"}
	return []*kvscheduler.Descriptor{a, b}
}

// notify pushes a southbound notification, as the reference's southbound
// changes first and then notifies, and waits until it is recorded (its
// statuses are published with its record).
func notify(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound, key string, value, md any) *kvscheduler.TxnRecord {
	t.Helper()
	before := len(s.TransactionHistory(time.Time{}, time.Time{}))
	if value == nil {
		sb.Remove(key)
	} else {
		sb.Set(key, value, true)
	}
	if err := s.PushSBNotification(key, value, md); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the notification", func() bool { return len(s.TransactionHistory(time.Time{}, time.Time{})) > before })
	h := s.TransactionHistory(time.Time{}, time.Time{})
	if rec := h[len(h)-1]; rec.Type == kvscheduler.SBNotification {
		return rec
	}
	t.Fatalf("the last transaction is not the notification: %v", h[len(h)-1])
	return nil
}

// Mirrors the reference's TestNotifications (notification_test.go): a full
// resync leaves B/base2 PENDING on A/base1; the southbound notifies
// A/base1 (with metadata), which creates B/base2 and item1 (item2 waits
// for A/base1/item2); a second notification adds item2 to A/base1, which
// creates B/base2/item2; the last removes A/base1, which takes B/base2 and
// its items down. Not ported: the reference's SB view of A/ (its dump
// reads the southbound, which A's descriptor cannot; Lariat's SB view is
// what the scheduler believes). A value left PENDING by its create has
// last operation CREATE.
func TestRefNotifications(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ds := refNotifiedDescriptors(sb)
	reads := correlated(ds[1])
	register(t, s, ds...)

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("B/base2", "item1,item2").
		Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, nil)
	wantNoMetadata(t, s, "descriptor2")
	wantOpsWithReads(t, sb, "retrieve descriptor2")
	if want := [][]string{{"B/base2=item1,item2"}}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want %q", *reads, want)
	}
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "", "B/base2=item1,item2")
	wantRefRecord(t, rec, "CREATE B/base2 =item1,item2 NONEXISTENT->PENDING noop")
	wantBaseDump(t, s, "descriptor2", kvscheduler.NBView, false, "B/base2=item1,item2 NB")
	wantBaseDump(t, s, "descriptor2", kvscheduler.SBView, false)
	wantPendingAfterCreate(t, s, "B/base2", "A/base1")

	rec = notify(t, s, sb, "A/base1", "item1", 10)
	wantSB(t, sb, map[string]any{"A/base1": "item1", "B/base2": "item1,item2", "B/base2/item1": "item1"})
	wantOps(t, sb, "create B/base2", "create B/base2/item1")
	if md := metadataOf(t, s, "descriptor1", "base1"); md != 10 {
		t.Errorf("A/base1 has metadata %v, want the notified 10", md)
	}
	mdB := metadataOf(t, s, "descriptor2", "base2")
	for _, view := range []kvscheduler.View{kvscheduler.CachedView} {
		wantBaseDump(t, s, "descriptor1", view, true, "A/base1=item1 SB")
	}
	wantBaseDump(t, s, "descriptor1", kvscheduler.NBView, false)
	wantStatus(t, s, "B/base2", kvscheduler.Configured, kvscheduler.OpCreate)
	wantStatus(t, s, "B/base2/item1", kvscheduler.Configured, kvscheduler.OpCreate)
	wantPendingAfterCreate(t, s, "B/base2/item2", "A/base1/item2")
	wantStatus(t, s, "A/base1", kvscheduler.Obtained, kvscheduler.OpNone)
	wantStatus(t, s, "A/base1/item1", kvscheduler.Obtained, kvscheduler.OpNone)
	wantRefHeader(t, rec, 1, kvscheduler.SBNotification, kvscheduler.NoResync, "", "A/base1=item1")
	wantRefRecord(t, rec,
		"CREATE A/base1 =item1 NONEXISTENT->OBTAINED",
		"CREATE B/base2 =item1,item2 PENDING->CONFIGURED",
		"CREATE B/base2/item1 =item1 NONEXISTENT->CONFIGURED derived",
		"CREATE B/base2/item2 =item2 NONEXISTENT->PENDING derived noop",
		"CREATE A/base1/item1 =item1 NONEXISTENT->OBTAINED derived property")

	rec = notify(t, s, sb, "A/base1", "item1,item2", 11)
	wantSB(t, sb, map[string]any{"A/base1": "item1,item2", "B/base2": "item1,item2", "B/base2/item1": "item1",
		"B/base2/item2": "item2"})
	wantOps(t, sb, "create B/base2/item2")
	if md := metadataOf(t, s, "descriptor1", "base1"); md != 11 {
		t.Errorf("A/base1 has metadata %v, want the notified 11", md)
	}
	if md := metadataOf(t, s, "descriptor2", "base2"); md != mdB {
		t.Errorf("B/base2 was not touched, but its metadata changed from %v to %v", mdB, md)
	}
	for _, k := range []string{"B/base2", "B/base2/item1", "B/base2/item2"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}
	wantRefHeader(t, rec, 2, kvscheduler.SBNotification, kvscheduler.NoResync, "", "A/base1=item1,item2")
	wantRefRecord(t, rec,
		"UPDATE A/base1 =item1=>item1,item2 OBTAINED->OBTAINED",
		"CREATE A/base1/item2 =item2 NONEXISTENT->OBTAINED derived property",
		"CREATE B/base2/item2 =item2 PENDING->CONFIGURED derived")

	rec = notify(t, s, sb, "A/base1", nil, nil)
	wantSB(t, sb, nil)
	wantNoMetadata(t, s, "descriptor1")
	wantOps(t, sb, "delete B/base2/item2", "delete B/base2/item1", "delete B/base2")
	wantStatus(t, s, "B/base2", kvscheduler.Pending, kvscheduler.OpDelete, "A/base1")
	wantStatus(t, s, "A/base1", kvscheduler.NonExistent, kvscheduler.OpNone)
	wantRefHeader(t, rec, 3, kvscheduler.SBNotification, kvscheduler.NoResync, "", "A/base1=<nil>")
	wantRefRecord(t, rec,
		"DELETE A/base1/item1 =item1 OBTAINED->REMOVED derived property",
		"DELETE B/base2/item2 =item2 CONFIGURED->REMOVED derived",
		"DELETE A/base1/item2 =item2 OBTAINED->REMOVED derived property",
		"DELETE B/base2/item1 =item1 CONFIGURED->REMOVED derived",
		"DELETE B/base2 =item1,item2 CONFIGURED->PENDING",
		"DELETE A/base1 =item1,item2 OBTAINED->REMOVED")
}
