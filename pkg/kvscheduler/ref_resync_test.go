package kvscheduler_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// wantNoMetadata checks that a descriptor's metadata map is empty.
func wantNoMetadata(t *testing.T, s *kvscheduler.Scheduler, desc string) {
	t.Helper()
	m, ok := s.MetadataMap(desc)
	if !ok {
		t.Fatalf("descriptor %s has no metadata map", desc)
	}
	if l := m.Labels(); len(l) > 0 {
		t.Errorf("descriptor %s holds metadata of %v, want none", desc, l)
	}
}

// Mirrors the reference's TestEmptyResync (resync_test.go): a full resync
// of nothing over an empty southbound reads it (with an empty correlate)
// and executes nothing.
func TestRefEmptyResync(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("descriptor1", "A/")
	reads := correlated(d)
	register(t, s, d)
	if h := s.TransactionHistory(time.Time{}, time.Time{}); len(h) != 0 {
		t.Fatalf("history before the first transaction: %v", h)
	}
	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).WithDescription("testing empty resync").
		Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, nil)
	wantNoMetadata(t, s, "descriptor1")
	wantOpsWithReads(t, sb, "retrieve descriptor1")
	if want := [][]string{nil}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want one read with none", *reads)
	}
	if h := s.TransactionHistory(time.Time{}, time.Time{}); len(h) != 1 {
		t.Errorf("%d transactions recorded, want 1", len(h))
	}
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "testing empty resync")
	wantRefRecord(t, rec)
	if rec.RetryOf != nil {
		t.Errorf("the resync retries %v", rec.RetryOf)
	}
}

// Mirrors the reference's TestResyncWithEmptySB (resync_test.go): a full
// resync creates two bases over an empty southbound, A/base2 depending on
// A/base1/item1 and A/base1/item2 on A/base2/item1 (a derived value
// depending on a derived value); then an empty full resync removes
// everything, dependents first; its record lists the deletes it adds
// among its values.
func TestRefResyncWithEmptySB(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := refDescriptor(sb, "descriptor1", "A/")
	d.Dependencies = refDeps(map[string][]string{"A/base2": {"A/base1/item1"}, "A/base1/item2": {"A/base2/item1"}})
	reads := correlated(d)
	register(t, s, d)

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		WithDescription("testing resync against empty SB").
		SetValue("A/base2", "item1").SetValue("A/base1", "item1,item2").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item1,item2", "A/base1/item1": "item1", "A/base1/item2": "item2",
		"A/base2": "item1", "A/base2/item1": "item1"})
	wantOpsWithReads(t, sb, "retrieve descriptor1", "create A/base1", "create A/base1/item1", "create A/base2",
		"create A/base2/item1", "create A/base1/item2")
	// The first resync correlates with the requested values, without metadata.
	if want := [][]string{{"A/base1=item1,item2", "A/base2=item1"}}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want %q", *reads, want)
	}
	metadataOf(t, s, "descriptor1", "base1")
	metadataOf(t, s, "descriptor1", "base2")
	for _, view := range []kvscheduler.View{kvscheduler.NBView, kvscheduler.SBView, kvscheduler.CachedView} {
		wantBaseDump(t, s, "descriptor1", view, true, "A/base1=item1,item2 NB", "A/base2=item1 NB")
	}
	for _, k := range []string{"A/base1", "A/base1/item1", "A/base1/item2", "A/base2", "A/base2/item1"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "testing resync against empty SB",
		"A/base1=item1,item2", "A/base2=item1")
	wantRefRecord(t, rec,
		"CREATE A/base1 =item1,item2 NONEXISTENT->CONFIGURED",
		"CREATE A/base1/item1 =item1 NONEXISTENT->CONFIGURED derived",
		"CREATE A/base2 =item1 NONEXISTENT->CONFIGURED",
		"CREATE A/base2/item1 =item1 NONEXISTENT->CONFIGURED derived",
		"CREATE A/base1/item2 =item2 NONEXISTENT->CONFIGURED derived")

	*reads = nil
	rec, err = s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, nil)
	wantNoMetadata(t, s, "descriptor1")
	wantOpsWithReads(t, sb, "retrieve descriptor1", "delete A/base1/item2", "delete A/base2/item1",
		"delete A/base2", "delete A/base1/item1", "delete A/base1")
	// Later resyncs correlate with the values believed to exist, with metadata.
	if want := [][]string{{"A/base1=item1,item2+md", "A/base2=item1+md"}}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want %q", *reads, want)
	}
	// The deletes a full resync adds for the values it no longer requests
	// are among the transaction's values, as in the reference.
	wantRefHeader(t, rec, 1, kvscheduler.NBTransaction, kvscheduler.FullResync, "", "A/base1=<nil>", "A/base2=<nil>")
	wantRefRecord(t, rec,
		"DELETE A/base1/item2 =item2 CONFIGURED->REMOVED derived",
		"DELETE A/base2/item1 =item1 CONFIGURED->REMOVED derived",
		"DELETE A/base2 =item1 CONFIGURED->REMOVED",
		"DELETE A/base1/item1 =item1 CONFIGURED->REMOVED derived",
		"DELETE A/base1 =item1,item2 CONFIGURED->REMOVED")
	for _, k := range []string{"A/base1", "A/base1/item1", "A/base1/item2", "A/base2", "A/base2/item1"} {
		wantStatus(t, s, k, kvscheduler.NonExistent, kvscheduler.OpNone)
	}
}

// Mirrors the reference's TestResyncWithNonEmptySB (resync_test.go; the
// ops and states only are also in TestResyncWithNonEmptySBClaimingDerived):
// a first full resync over a southbound holding A/base1..3 with one item
// each (values the NB prefix makes DISCOVERED); A/base2's items depend on
// A/base1 and A/base1/item1 (which the resync removes), A/base3 is
// updated by re-creation. Deviation (docs/kvscheduler.md): A/base3/item1,
// created again after its base's re-creation, has PrevState REMOVED.
// The last operations are the reference's: CREATE for the PENDING item,
// UPDATE (the operation chosen) for the re-created base and for the item
// found in sync.
func TestRefResyncWithNonEmptySB(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	for _, b := range []string{"A/base1", "A/base2", "A/base3"} {
		sb.Set(b, "item1", false)
		sb.Set(b+"/item1", "item1", false)
	}
	d := refDescriptor(sb, "descriptor1", "A/")
	d.Dependencies = refDeps(map[string][]string{"A/base2/item1": {"A/base1"}, "A/base2/item2": {"A/base1/item1"}})
	d.UpdateWithRecreate = func(key string, _, _, _ any) bool { return key == "A/base3" }
	reads := correlated(d)
	register(t, s, d)

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("A/base1", "item2").
		SetValue("A/base2", "item1,item2").SetValue("A/base3", "item1,item2").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "item2", "A/base1/item2": "item2", "A/base2": "item1,item2",
		"A/base2/item1": "item1", "A/base3": "item1,item2", "A/base3/item1": "item1", "A/base3/item2": "item2"})
	wantOpsWithReads(t, sb, "retrieve descriptor1", "delete A/base3/item1", "delete A/base3", "create A/base3",
		"create A/base3/item1", "create A/base3/item2", "delete A/base1/item1", "update A/base1",
		"create A/base1/item2", "update A/base2")
	if want := [][]string{{"A/base1=item2", "A/base2=item1,item2", "A/base3=item1,item2"}}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want %q", *reads, want)
	}
	for _, l := range []string{"base1", "base2", "base3"} {
		metadataOf(t, s, "descriptor1", l)
	}
	for _, view := range []kvscheduler.View{kvscheduler.NBView, kvscheduler.SBView, kvscheduler.CachedView} {
		wantBaseDump(t, s, "descriptor1", view, true, "A/base1=item2 NB", "A/base2=item1,item2 NB", "A/base3=item1,item2 NB")
	}
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "A/base2", kvscheduler.Configured, kvscheduler.OpUpdate)
	for _, k := range []string{"A/base1/item2", "A/base3/item1", "A/base3/item2"} {
		wantStatus(t, s, k, kvscheduler.Configured, kvscheduler.OpCreate)
	}
	wantStatus(t, s, "A/base2/item1", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "A/base2/item2", kvscheduler.Pending, kvscheduler.OpCreate, "A/base1/item1")
	wantStatus(t, s, "A/base3", kvscheduler.Configured, kvscheduler.OpUpdate)
	wantStatus(t, s, "A/base1/item1", kvscheduler.NonExistent, kvscheduler.OpNone)
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "",
		"A/base1=item2", "A/base2=item1,item2", "A/base3=item1,item2")
	wantRefRecord(t, rec,
		"DELETE A/base3/item1 =item1 DISCOVERED->REMOVED derived recreate",
		"DELETE A/base3 =item1 DISCOVERED->REMOVED recreate",
		"CREATE A/base3 =item1,item2 REMOVED->CONFIGURED recreate",
		"CREATE A/base3/item1 =item1 REMOVED->CONFIGURED derived recreate", // reference: NONEXISTENT (deviation)
		"CREATE A/base3/item2 =item2 NONEXISTENT->CONFIGURED derived",
		"DELETE A/base1/item1 =item1 DISCOVERED->REMOVED derived",
		"UPDATE A/base1 =item1=>item2 DISCOVERED->CONFIGURED",
		"CREATE A/base1/item2 =item2 NONEXISTENT->CONFIGURED derived",
		"UPDATE A/base2 =item1=>item1,item2 DISCOVERED->CONFIGURED",
		"CREATE A/base2/item2 =item2 NONEXISTENT->PENDING derived noop")
}

// Mirrors the reference's TestResyncNotRemovingSBValues (resync_test.go):
// a full resync over a southbound holding a value it owns (OBTAINED),
// on which the requested A/base2 depends: the southbound's value is kept,
// without metadata, and satisfies the dependency; the record lists the
// obtained value among the resync's values, as the reference's does.
func TestRefResyncNotRemovingSBValues(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	sb.Set("A/base1", "=base-value1", true)
	d := refDescriptor(sb, "descriptor1", "A/")
	d.Dependencies = refDeps(map[string][]string{"A/base2": {"A/base1"}})
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		kvs, err := retrieve(ctx, c)
		for i := range kvs {
			if kvs[i].Origin == kvscheduler.FromSB {
				kvs[i].Metadata = nil // as the reference's southbound holds it
			}
		}
		return kvs, err
	}
	reads := correlated(d)
	register(t, s, d)

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("A/base2", "item1").
		Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"A/base1": "=base-value1", "A/base2": "item1", "A/base2/item1": "item1"})
	wantOpsWithReads(t, sb, "retrieve descriptor1", "create A/base2", "create A/base2/item1")
	if want := [][]string{{"A/base2=item1"}}; !reflect.DeepEqual(*reads, want) {
		t.Errorf("read with correlate %q, want %q", *reads, want)
	}
	metadataOf(t, s, "descriptor1", "base2")
	if m, _ := s.MetadataMap("descriptor1"); m != nil {
		if md, ok := m.Get("base1"); ok {
			t.Errorf("the obtained value has metadata %v in the map", md)
		}
	}
	wantBaseDump(t, s, "descriptor1", kvscheduler.NBView, true, "A/base2=item1 NB")
	for _, view := range []kvscheduler.View{kvscheduler.SBView, kvscheduler.CachedView} {
		wantBaseDump(t, s, "descriptor1", view, false, "A/base1==base-value1 SB", "A/base2=item1 NB")
	}
	wantStatus(t, s, "A/base1", kvscheduler.Obtained, kvscheduler.OpNone)
	wantStatus(t, s, "A/base2", kvscheduler.Configured, kvscheduler.OpCreate)
	wantStatus(t, s, "A/base2/item1", kvscheduler.Configured, kvscheduler.OpCreate)
	wantRefHeader(t, rec, 0, kvscheduler.NBTransaction, kvscheduler.FullResync, "", "A/base1==base-value1", "A/base2=item1")
	if n := len(rec.Values); rec.Obtained != 1 || n == 0 || rec.Values[n-1].Key != "A/base1" {
		t.Errorf("values %v end with %d obtained, want A/base1 last, obtained", rec.Values, rec.Obtained)
	}
	wantRefRecord(t, rec,
		"CREATE A/base2 =item1 NONEXISTENT->CONFIGURED",
		"CREATE A/base2/item1 =item1 NONEXISTENT->CONFIGURED derived")
}
